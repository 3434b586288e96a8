//go:build !linux

package durable

import "github.com/dagent-dev/dagent/store"

// processOf records nothing: outside Linux a process group cannot be told
// apart from a later one of the same id, so that a resume could kill a
// stranger's processes.
func processOf(int) (store.Process, bool) { return store.Process{}, false }

// killOrphan kills nothing, for the same reason.
func killOrphan(store.Process) bool { return false }
