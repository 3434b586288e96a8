package registry

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dagent-dev/dagent/agent"
)

// ErrNoProgram is matched by the error of [Registry.CheckProgram] for a
// worker whose program cannot be started on this machine.
var ErrNoProgram = errors.New("program not found")

// CheckProgram reports whether the program of the worker registered under
// name can be started here, so that a linter can warn before a run fails:
// for a worker whose agent is an *[agent.Command], its program must be an
// executable file, looked up in PATH when its name has no path separator,
// else taken relative to the command's Dir, as the command starts it. The
// error matches [ErrNoProgram]. Workers of other agents, and names that are
// not workers, have nothing to check: nil.
func (r *Registry) CheckProgram(name string) error {
	w, ok := r.Lookup(name)
	if !ok {
		return nil
	}
	c, ok := w.Agent.(*agent.Command)
	if !ok || len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil
	}
	prog := c.Argv[0]
	path := prog
	if strings.ContainsRune(prog, filepath.Separator) && !filepath.IsAbs(prog) && c.Dir != "" {
		path = filepath.Join(c.Dir, prog)
	}
	if _, err := exec.LookPath(path); err != nil {
		return fmt.Errorf("worker %q: %w: %w", name, ErrNoProgram, err)
	}
	return nil
}

// CheckPrograms is [Registry.CheckProgram] for every worker, in name
// order, so that a host can refuse a registry whose programs are missing
// before a run starts any of them: an error joining one per worker that
// fails, each matching [ErrNoProgram]; nil when all can be started.
func (r *Registry) CheckPrograms() error {
	var errs []error
	for _, name := range r.Names() {
		if err := r.CheckProgram(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
