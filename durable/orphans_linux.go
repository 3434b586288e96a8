package durable

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/dagent-dev/dagent/store"
)

var bootID = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
})

// processOf describes the program pid of this host, which leads its own
// process group: false when its start time cannot be read, such as when it
// is gone already.
func processOf(pid int) (store.Process, bool) {
	start, err := startTime(pid)
	if err != nil || bootID() == "" {
		return store.Process{}, false
	}
	return store.Process{PGID: pid, Host: hostname(), BootID: bootID(), Start: start}, true
}

// startTime returns when the process pid started, in clock ticks since
// boot: field 22 of /proc/<pid>/stat.
func startTime(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStartTime(b)
}

// parseStartTime reads the start time of a /proc/<pid>/stat line. The
// command name, field 2, is in parentheses and may hold spaces and
// parentheses itself: the fields are counted after its last ')'.
func parseStartTime(stat []byte) (int64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name in the process's stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	const startField = 22 - 3 // fields[0] is field 3, the state
	if len(fields) <= startField {
		return 0, fmt.Errorf("the process's stat has %d fields, not %d", len(fields)+2, startField+3)
	}
	return strconv.ParseInt(fields[startField], 10, 64)
}

// killOrphan kills the process group p names if it is the one p's
// program led: on this host, since the same boot, and either its leader
// runs with p's start time, or it is gone. A pid is not reused while a
// process group of that id lives, so a leader of another start time means
// that p's group ended and its id was taken since: it is left alone. A
// leader gone with its group's id taken by a new group whose own leader is
// gone too cannot be told apart; that takes the id space to wrap around
// between the crash and the resume.
func killOrphan(p store.Process) bool {
	if p.Host != hostname() || p.BootID == "" || p.BootID != bootID() || p.PGID <= 1 || p.PGID == syscall.Getpgrp() {
		return false
	}
	start, err := startTime(p.PGID)
	switch {
	case err == nil && start != p.Start:
		return false
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ESRCH):
		return false
	}
	return syscall.Kill(-p.PGID, syscall.SIGKILL) == nil
}
