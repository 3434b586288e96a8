package runner

import (
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/agent"
)

// EventKind names a state change.
type EventKind string

// Event kinds. A run's events come in this order: EventRunStarted first and
// EventRunFinished last; in the Phased schedule each phase's task events sit
// between its EventPhaseStarted and EventPhaseFinished; a task's events go
// EventTaskStarted, (EventTaskVerified, EventTaskRetried)*, then one of
// EventTaskFinished, EventTaskFailed, EventTaskSkipped or EventTaskWaiting,
// and every event of a task comes after the final events of the tasks it
// depends on. A task that never runs (done from initial results, or left
// pending by a halted run) has no events. A task skipped because a gate
// upstream failed has only EventTaskSkipped, emitted right after the gate's
// EventTaskFailed, inside the gate's phase; a phase all of whose tasks were
// skipped that way is never started.
const (
	EventRunStarted    EventKind = "run_started"
	EventRunFinished   EventKind = "run_finished"
	EventPhaseStarted  EventKind = "phase_started"
	EventPhaseFinished EventKind = "phase_finished"
	EventTaskStarted   EventKind = "task_started"
	EventTaskRetried   EventKind = "task_retried"
	EventTaskVerified  EventKind = "task_verified"
	EventTaskFinished  EventKind = "task_finished"
	EventTaskFailed    EventKind = "task_failed"
	EventTaskSkipped   EventKind = "task_skipped"
	EventTaskWaiting   EventKind = "task_waiting"
)

// Event is one state change of a run.
type Event struct {
	// Seq numbers the run's events from 1, in delivery order.
	Seq   int
	Kind  EventKind
	Time  time.Time
	RunID string
	// TaskID is set on task events.
	TaskID string
	// Phase is the phase of phase events and of task events (0-based).
	Phase int
	// Attempt is the attempt a task event is about.
	Attempt int
	// Duration is the task's time so far on task events, the phase's on
	// EventPhaseFinished and the run's on EventRunFinished.
	Duration time.Duration
	// Err is the failure of EventTaskRetried, EventTaskFailed and EventTaskSkipped, and
	// the run's on EventRunFinished.
	Err error
	// Diagnosis explains a failed verification or a failed attempt.
	Diagnosis string
	// Passed is the verdict of EventTaskVerified.
	Passed bool
	// Output is the output on EventTaskFinished. It is the value the
	// result holds, shared: observers must not change it.
	Output any
	// Status is the run's status on EventRunFinished.
	Status Status
	// Usage is the token usage of every attempt of the task on its final
	// event, and of the whole run on EventRunFinished.
	Usage agent.Usage
	// AttemptEnded is when the agent of the task's last attempt returned
	// (or the attempt was given up on), on the events that follow it: its
	// EventTaskVerified, whose check began then; the EventTaskRetried of
	// the next attempt, whose wait began then; and the task's final event.
	// It is zero where no attempt called an agent. An observer times the
	// attempt from its EventTaskStarted or EventTaskRetried to it, and the
	// check from it to the EventTaskVerified.
	AttemptEnded time.Time

	// The fields below are set only on the events of an execution that
	// replans (package executor), which come between its runs.

	// Class is the class of the failure a replan is about.
	Class Class
	// Version is the version of the plan an execution event is about: 0
	// for the plan the execution started with, k for its k-th repair.
	Version int
	// Tasks and NewTasks count the tasks of an adopted repair plan, and
	// those of them the plan it replaces did not have.
	Tasks    int
	NewTasks int
	// Halt says why the execution stopped replanning.
	Halt string
}

// Observer receives a run's events.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f.
func (f ObserverFunc) Observe(e Event) { f(e) }

// ObserverPanicError is an observer's panic. The observer goes on receiving
// the events after the one it panicked on; the first panic of each observer
// is returned by Run (joined with any other error).
type ObserverPanicError struct {
	Event Event
	Value any
	Stack []byte
}

func (e *ObserverPanicError) Error() string {
	return fmt.Sprintf("observer panicked on %s event %d: %v\n%s", e.Event.Kind, e.Event.Seq, e.Value, e.Stack)
}

// bus appends events to one log that each observer reads at its own pace,
// so that emitting never waits for an observer. Once every observer has
// seen every event of the log, the log starts over in the same array: a
// run whose observers keep up holds a few events at a time, not all of
// them.
type bus struct {
	mu     sync.Mutex
	cond   sync.Cond
	log    []Event // the events after base
	base   int     // the events every observer has seen, dropped from log
	seen   []int   // per observer, the events it has seen
	closed bool
	wg     sync.WaitGroup
	panics []error // per observer, the first panic
}

func newBus(observers []Observer) *bus {
	if len(observers) == 0 {
		return nil
	}
	b := &bus{panics: make([]error, len(observers)), seen: make([]int, len(observers))}
	b.cond.L = &b.mu
	for k, o := range observers {
		b.wg.Go(func() { b.deliver(k, o) })
	}
	return b
}

// emit appends e to the log; on a nil bus it does nothing, so that a run
// without observers pays nothing for events.
func (b *bus) emit(e Event) {
	if b == nil {
		return
	}
	b.mu.Lock()
	e.Seq = b.base + len(b.log) + 1
	b.log = append(b.log, e)
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *bus) deliver(k int, o Observer) {
	for {
		b.mu.Lock()
		for b.seen[k] == b.base+len(b.log) && !b.closed {
			b.cond.Wait()
		}
		// The events past len(b.log) are appended beside the batch, never
		// over it: the log starts over only once every observer has seen
		// it, this one this batch.
		batch, closed := b.log[b.seen[k]-b.base:], b.closed
		b.mu.Unlock()
		for _, e := range batch {
			b.call(k, o, e)
		}
		if closed && len(batch) == 0 {
			return
		}
		b.mu.Lock()
		b.seen[k] += len(batch)
		if b.caughtUp() {
			clear(b.log) // the outputs the events hold go with them
			b.base += len(b.log)
			b.log = b.log[:0]
		}
		b.mu.Unlock()
	}
}

// caughtUp reports whether every observer has seen every event. The
// caller holds mu.
func (b *bus) caughtUp() bool {
	for _, n := range b.seen {
		if n != b.base+len(b.log) {
			return false
		}
	}
	return true
}

func (b *bus) call(k int, o Observer, e Event) {
	defer func() {
		if v := recover(); v != nil && b.panics[k] == nil {
			b.panics[k] = &ObserverPanicError{Event: e, Value: v, Stack: debug.Stack()}
		}
	}()
	o.Observe(e)
}

// close waits for every observer to see every event and returns their
// panics.
func (b *bus) close() []error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
	b.wg.Wait()
	return b.panics
}
