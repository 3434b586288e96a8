//go:build !unix

package durable

import "os"

// processAlive reports whether a process of this host has id pid; where a
// process cannot be asked, one that can be found is taken for alive.
func processAlive(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
