package executor

import (
	"runtime/debug"
	"time"

	"github.com/dagent-dev/dagent/runner"
)

// Event kinds of an execution, besides those of its runs. They come
// between the runs: after the EventRunFinished of the run that failed and
// before the EventRunStarted of the next. Their RunID is the execution's
// base id ([Result]'s RunID), their Seq 0; TaskID, Class and Diagnosis
// describe the failure replanning is about.
const (
	// EventReplanRequested: the run of the plan of Version failed in a way
	// a replan may repair, no limit stops it, and the replanner is asked
	// next (after the cooldown).
	EventReplanRequested runner.EventKind = "replan_requested"
	// EventRepairAdopted: the repair plan of Version was accepted, and
	// committed to the journal; it runs next. Tasks counts its tasks,
	// NewTasks those the failed plan did not have.
	EventRepairAdopted runner.EventKind = "repair_adopted"
	// EventReplanFailed: the replanner gave no repair plan, or the critic
	// refused it; Err says why. EventHalted follows.
	EventReplanFailed runner.EventKind = "replan_failed"
	// EventHalted: replanning stopped; Halt says why and Err is the
	// *[HaltError] of the result. It is the execution's last event.
	EventHalted runner.EventKind = "execution_halted"
	// EventRoundRequested: the round planner of an execution in rounds
	// ([WithRounds]) is asked for round Attempt, after the run of the plan
	// of Version (before the first round, Version 0 has not run).
	EventRoundRequested runner.EventKind = "round_requested"
	// EventRoundAdopted: the plan of round Attempt, Version, was accepted
	// and committed; it runs next. Tasks counts its tasks, NewTasks those
	// the round before did not have.
	EventRoundAdopted runner.EventKind = "round_adopted"
	// EventRoundsDone: the round planner answered done after round
	// Attempt-1; it is the execution's last event.
	EventRoundsDone runner.EventKind = "rounds_done"
)

// deliver hands evs to the execution's observers, in order, on the
// execution's goroutine: the runs' events were all delivered when Run
// returned, so an observer sees every event in order.
func (e *execution) deliver(evs []runner.Event) {
	if len(e.c.observers) == 0 {
		return
	}
	for _, ev := range evs {
		ev.RunID, ev.Time = e.res.RunID, time.Now()
		for k, o := range e.c.observers {
			e.observe(k, o, ev)
		}
	}
}

// observe calls o, keeping its first panic as the runner does.
func (e *execution) observe(k int, o runner.Observer, ev runner.Event) {
	defer func() {
		if v := recover(); v != nil && e.panics[k] == nil {
			e.panics[k] = &runner.ObserverPanicError{Event: ev, Value: v, Stack: debug.Stack()}
		}
	}()
	o.Observe(ev)
}

// failureEvent is an event of kind about failure f.
func failureEvent(kind runner.EventKind, version int, f Failure) runner.Event {
	return runner.Event{Kind: kind, Version: version, TaskID: f.TaskID, Class: runner.Class(f.Class), Diagnosis: f.Diagnosis}
}
