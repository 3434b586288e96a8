package runnertest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// checkOrder checks the order guarantees of a run's events (see
// [runner.Event]) and that they agree with its result:
//
//   - Seq numbers the events from 1; run_started comes first and
//     run_finished last, with the run's status;
//   - in the Phased schedule, phases start in increasing order, one at a
//     time, and a task's events sit between the phase_started and
//     phase_finished of its own phase — but for a task skipped below a
//     failed synthesis gate, whose one event sits in the gate's phase;
//     a phase with no task event is never started; the Eager schedule
//     has no phase events;
//   - a task's events go task_started, then task_verified and
//     task_retried as attempts go, then one final event whose kind is
//     the task's final status; a task skipped by its condition or below
//     a failed gate has only task_skipped, with attempt 0; a task done
//     before the run or left pending has none;
//   - a task event's Phase is the task's level, in both schedules;
//   - every event of a task comes after the final events of its
//     dependencies, but for a task skipped below a failed gate, whose
//     event comes after that gate's task_failed.
func checkOrder(t *testing.T, s Scenario, res *runner.Result, evs []runner.Event) {
	t.Helper()
	if !assert.NotEmpty(t, evs, "events") {
		return
	}
	for i, e := range evs {
		assert.Equal(t, i+1, e.Seq, "Seq of event %d (%s)", i, e.Kind)
		assert.Equal(t, res.RunID, e.RunID, "RunID of event %d (%s)", i, e.Kind)
	}
	first, last := evs[0], evs[len(evs)-1]
	assert.Equal(t, runner.EventRunStarted, first.Kind, "the first event")
	assert.Equal(t, runner.EventRunFinished, last.Kind, "the last event")
	assert.Equal(t, res.Status, last.Status, "the status of run_finished")
	for _, e := range evs[1 : len(evs)-1] {
		assert.NotContains(t, []runner.EventKind{runner.EventRunStarted, runner.EventRunFinished}, e.Kind, "event %d", e.Seq)
	}

	tasks := make(map[string]*plan.Task, len(s.Plan.Tasks))
	for i := range s.Plan.Tasks {
		tasks[s.Plan.Tasks[i].ID] = &s.Plan.Tasks[i]
	}
	level := levels(s.Plan)
	final := map[string]int{} // task → index of its final event
	byTask := map[string][]runner.Event{}
	phase, open, inPhase := -1, false, 0
	for i, e := range evs[1 : len(evs)-1] {
		i++
		switch e.Kind {
		case runner.EventPhaseStarted:
			assert.Equal(t, runner.Phased, s.Schedule, "phase events in the eager schedule")
			assert.False(t, open, "phase %d starts while phase %d is open", e.Phase, phase)
			assert.Greater(t, e.Phase, phase, "phases start in increasing order")
			phase, open, inPhase = e.Phase, true, 0
			continue
		case runner.EventPhaseFinished:
			assert.True(t, open && e.Phase == phase, "phase_finished %d closes the phase under way (%d)", e.Phase, phase)
			assert.NotZero(t, inPhase, "phase %d has task events: a phase with nothing to run is never started", phase)
			open = false
			continue
		}
		inPhase++
		if !assert.Contains(t, tasks, e.TaskID, "event %d (%s) names a task of the plan", e.Seq, e.Kind) {
			continue
		}
		assert.Equal(t, level[e.TaskID], e.Phase, "event %d (%s) of %s: Phase is the task's level", e.Seq, e.Kind, e.TaskID)
		_, settled := final[e.TaskID]
		assert.False(t, settled, "event %d (%s) of %s after its final event", e.Seq, e.Kind, e.TaskID)
		belowGate := gateSkip(e)
		if s.Schedule == runner.Phased {
			assert.True(t, open, "event %d (%s) of %s outside a phase", e.Seq, e.Kind, e.TaskID)
			if !belowGate {
				assert.Equal(t, phase, e.Phase, "event %d (%s) of %s in its own phase", e.Seq, e.Kind, e.TaskID)
			}
		}
		if belowGate {
			assert.True(t, afterFailedGate(evs[:i], tasks), "event %d: %s skipped below a gate comes after the gate's failure", e.Seq, e.TaskID)
		} else {
			for _, dep := range tasks[e.TaskID].DependsOn {
				if _, ok := final[dep]; !ok && taskHasEvents(evs, dep) {
					assert.Failf(t, "event before a dependency settled", "event %d (%s) of %s before the final event of its dependency %s", e.Seq, e.Kind, e.TaskID, dep)
				}
			}
		}
		byTask[e.TaskID] = append(byTask[e.TaskID], e)
		if isFinal(e.Kind) {
			final[e.TaskID] = i
		}
	}
	assert.False(t, open, "a phase is still open at run_finished")

	for id, tr := range res.Tasks {
		checkTaskEvents(t, id, tr, byTask[id])
	}
}

// checkTaskEvents checks the events of one task against its result.
func checkTaskEvents(t *testing.T, id string, tr *runner.TaskResult, evs []runner.Event) {
	t.Helper()
	if len(evs) == 0 {
		assert.Contains(t, []runner.TaskStatus{runner.TaskDone, runner.TaskPending}, tr.Status,
			"task %s has no events: it is done before the run or left pending", id)
		if tr.Status == runner.TaskDone {
			assert.Zero(t, tr.Attempts, "task %s has no events and yet attempts", id)
		}
		return
	}
	last := evs[len(evs)-1]
	if !assert.True(t, isFinal(last.Kind), "task %s ends with a final event, not %s", id, last.Kind) {
		return
	}
	assert.Equal(t, finalKind(tr.Status), last.Kind, "the final event of %s says its status %s", id, tr.Status)
	assert.Equal(t, tr.Attempts, last.Attempt, "the final event of %s counts its attempts", id)
	if last.Kind == runner.EventTaskWaiting {
		// A review that waits has started, and made no attempt.
		assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskWaiting}, kinds(evs), "the events of %s", id)
		return
	}
	if len(evs) == 1 {
		assert.Equal(t, runner.EventTaskSkipped, last.Kind, "task %s has a final event alone: only a skip without running may", id)
		assert.Zero(t, last.Attempt, "task %s skipped without running", id)
		return
	}
	assert.Equal(t, runner.EventTaskStarted, evs[0].Kind, "the first event of %s", id)
	assert.Equal(t, 1, evs[0].Attempt, "task_started of %s is about attempt 1", id)
	attempt := 1
	for _, e := range evs[1 : len(evs)-1] {
		switch e.Kind {
		case runner.EventTaskVerified:
			assert.Equal(t, attempt, e.Attempt, "task_verified of %s is about the attempt under way", id)
		case runner.EventTaskRetried:
			attempt++
			assert.Equal(t, attempt, e.Attempt, "task_retried of %s starts the next attempt", id)
		default:
			assert.Failf(t, "unexpected event", "task %s: %s between its start and its final event", id, e.Kind)
		}
	}
	assert.Equal(t, attempt, last.Attempt, "the final event of %s is about its last attempt", id)
}

func isFinal(k runner.EventKind) bool {
	switch k {
	case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped, runner.EventTaskWaiting:
		return true
	}
	return false
}

func finalKind(s runner.TaskStatus) runner.EventKind {
	switch s {
	case runner.TaskDone:
		return runner.EventTaskFinished
	case runner.TaskFailed:
		return runner.EventTaskFailed
	case runner.TaskSkipped:
		return runner.EventTaskSkipped
	case runner.TaskWaiting:
		return runner.EventTaskWaiting
	}
	return ""
}

// gateSkip reports whether e skips a task below a failed gate.
func gateSkip(e runner.Event) bool {
	return e.Kind == runner.EventTaskSkipped && errors.Is(e.Err, runner.ErrGateFailed)
}

// afterFailedGate reports whether a synthesis gate failed among evs.
func afterFailedGate(evs []runner.Event, tasks map[string]*plan.Task) bool {
	for _, e := range evs {
		if e.Kind == runner.EventTaskFailed && tasks[e.TaskID] != nil && tasks[e.TaskID].Type == plan.TypeSynthesisGate {
			return true
		}
	}
	return false
}

func taskHasEvents(evs []runner.Event, id string) bool {
	for _, e := range evs {
		if e.TaskID == id {
			return true
		}
	}
	return false
}

// levels returns the level of every task of p: 0 without dependencies,
// else one above its highest dependency.
func levels(p *plan.Plan) map[string]int {
	deps := make(map[string][]string, len(p.Tasks))
	for _, t := range p.Tasks {
		deps[t.ID] = t.DependsOn
	}
	out := make(map[string]int, len(p.Tasks))
	var level func(id string, depth int) int
	level = func(id string, depth int) int {
		if l, ok := out[id]; ok || depth > len(p.Tasks) {
			return l
		}
		l := 0
		for _, d := range deps[id] {
			l = max(l, level(d, depth+1)+1)
		}
		out[id] = l
		return l
	}
	for _, t := range p.Tasks {
		level(t.ID, 0)
	}
	return out
}
