package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// runProgress shows a run of dagent run or resume as it goes, on standard
// error, so that standard output holds only the result: a live view of
// the running tasks on a terminal, else the line log of
// [progress.Printer]. With --quiet it shows nothing. The run's id, in the
// text format, is the first line of standard output, printed when the run
// starts (or its plan is made), so that a run killed early still named
// itself.
type runProgress struct {
	announce func()
	show     runner.Observer // nil with --quiet
	stopOnce sync.Once
	stopView func()
}

func newRunProgress(cmd *cobra.Command, format, runID string) *runProgress {
	w := cmd.OutOrStdout()
	r := &runProgress{announce: func() {}, stopView: func() {}}
	if format == "text" {
		r.announce = sync.OnceFunc(func() { fmt.Fprintf(w, "run %s\n", runID) })
	}
	if quiet, _ := cmd.Flags().GetBool("quiet"); quiet {
		return r
	}
	errOut := cmd.ErrOrStderr()
	if f := terminal(errOut); f != nil {
		v := newLiveView(f, runID, os.Getenv("NO_COLOR") == "")
		r.show, r.stopView = v, v.stop
		return r
	}
	p := progress.NewPrinter(errOut)
	r.show, r.stopView = lineLog{p}, func() { p.Close() }
	return r
}

// quietFlag registers --quiet on a command that runs plans.
func quietFlag(cmd *cobra.Command) {
	cmd.Flags().BoolP("quiet", "q", false, "print only the result: no progress on standard error")
}

// Observe announces the run, then shows e.
func (r *runProgress) Observe(e runner.Event) {
	if e.Kind == runner.EventRunStarted || e.Kind == durable.EventPlanned || e.Kind == durable.EventPlanCached {
		r.announce()
	}
	if r.show != nil {
		r.show.Observe(e)
	}
}

// stop ends the view before the result is printed.
func (r *runProgress) stop() { r.stopOnce.Do(r.stopView) }

// lineLog is the line log, with the planner's plan and the executor's
// halt in the CLI's words.
type lineLog struct{ p *progress.Printer }

func (l lineLog) Observe(e runner.Event) {
	switch e.Kind {
	case durable.EventPlanned, durable.EventPlanCached:
		l.p.Println(eventLine(e))
	case executor.EventHalted:
		// The summary says it, with the flag to change.
	default:
		l.p.Observe(e)
	}
}

// terminal is the terminal w writes to, or nil when it is no terminal (a
// pipe, a file, a buffer) or one that cannot show a live view.
func terminal(w io.Writer) *os.File {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	return f
}
