// Package progress prints the runs of plans for people: a line per event
// as a run goes ([Printer]), and a summary table of how it ended
// ([WriteSummary]). It is the text the dagent command prints, for hosts
// that run plans with package runner, executor or durable and want the
// same view.
//
// Everything it prints is made visible first: task ids, outputs, errors
// and diagnoses come from plans, models and workers, and their control
// characters and escape sequences are shown escaped, never sent to the
// terminal.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/runner"
)

// DefaultHeartbeat is how often a [Printer] says that a task still runs.
const DefaultHeartbeat = 30 * time.Second

// Printer is a [runner.Observer] that prints one line per event of a run,
// with the time since the run started, and a heartbeat line for each task
// that runs long ("fetch: running for 1m0s"). It also takes the events of
// package executor, which come between the runs of a plan that is
// repaired. Create it with [NewPrinter]; [Printer.Close] stops its
// heartbeats.
type Printer struct {
	w     io.Writer
	every time.Duration

	mu      sync.Mutex // guards what follows: heartbeats write from their timers
	start   time.Time
	running map[string]*time.Timer
	closed  bool
}

// Option configures a [Printer].
type Option func(*Printer)

// WithHeartbeat sets how often the printer says that a task still runs;
// 0 or less prints no heartbeat. Default [DefaultHeartbeat].
func WithHeartbeat(every time.Duration) Option {
	return func(p *Printer) { p.every = every }
}

// NewPrinter returns a printer writing to w. Writes to w are serialised.
func NewPrinter(w io.Writer, opts ...Option) *Printer {
	p := &Printer{w: w, every: DefaultHeartbeat, running: make(map[string]*time.Timer)}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Observe prints e's line, and starts or stops the heartbeat of its task.
func (p *Printer) Observe(e runner.Event) {
	if e.Kind == executor.EventHalted {
		return // the summary says it, with what to do about it
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.start.IsZero() {
		// An event before the first run, such as an execution in rounds
		// asking for its first round, counts from itself.
		p.start = e.Time
	}
	switch e.Kind {
	case runner.EventRunStarted:
		p.start = e.Time
	case runner.EventTaskStarted:
		p.beat(e.TaskID, e.Time)
	case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped, runner.EventTaskWaiting:
		p.stop(e.TaskID)
	case runner.EventRunFinished:
		p.stopAll()
	}
	p.printf("%8s  %s\n", Round(e.Time.Sub(p.start)), Line(e))
}

// Println prints a line of the host's own between the event lines, such
// as a line about planning before the run started.
func (p *Printer) Println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.printf("%s\n", line)
	}
}

// Close stops the heartbeats; the printer prints nothing after it.
func (p *Printer) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopAll()
	p.closed = true
	return nil
}

// beat prints a heartbeat of task id, started at start, every p.every
// until it settles. It runs under p.mu.
func (p *Printer) beat(id string, start time.Time) {
	if p.every <= 0 {
		return
	}
	p.stop(id)
	var t *time.Timer
	t = time.AfterFunc(p.every, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed || p.running[id] != t {
			return // settled meanwhile
		}
		now := time.Now()
		ran := Round(now.Sub(start))
		if ran >= time.Second {
			ran = ran.Round(time.Second) // the beat's own lateness is noise: "running for 30s"
		}
		p.printf("%8s  %s: running for %s\n", Round(now.Sub(p.start)), id, ran)
		t.Reset(p.every)
	})
	p.running[id] = t
}

func (p *Printer) stop(id string) {
	if t := p.running[id]; t != nil {
		t.Stop()
		delete(p.running, id)
	}
}

func (p *Printer) stopAll() {
	for id := range p.running {
		p.stop(id)
	}
}

// printf writes a line made visible; a writer that fails loses the line,
// as a terminal that went away would.
func (p *Printer) printf(format string, args ...any) {
	io.WriteString(p.w, prose.Visible(fmt.Sprintf(format, args...)))
}

// Round rounds a duration for people: to the second from a minute on, to
// 10ms from a second on, else to the millisecond.
func Round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
