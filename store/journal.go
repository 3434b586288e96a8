package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

// Journal journals one run into a [Store]. It is the runner's [runner.Journal] (give
// it to [runner.WithJournal]: each task's final state is committed before the
// task counts as settled) and a [runner.Observer] (give it to [runner.WithObserver]:
// the events are appended to the run's timeline, and the run's status is
// set when the run finishes). [Journal.RecordLLM] keeps the run's LLM exchanges for
// replay. A replanning run commits each plan it adopts with
// [Journal.CommitPlan], so that the tasks committed after it are that plan
// version's. The run must exist in the store ([Store.CreateRun]) before it starts, and
// the runner should be given [runner.WithRunID] with the same id, so that a
// resumed run keeps its requests' idempotency keys.
//
// Writes are grouped: one writer at a time commits, in one transaction
// ([Store.CommitBatch]), the task states committed while the transaction
// before was in flight, with the events observed meanwhile, so that tasks
// that settle together share one commit. The journal is a
// [runner.AsyncJournal]: the runner does not wait for the write, and gives
// the task's place to the next ready task while it is under way, so that
// the more a write takes, the more states the next one gathers. A task
// still counts as settled only once the transaction holding its state has
// committed, and the error of a failed transaction goes to every commit in
// it. The writer encodes the outputs as it takes them, and takes states
// while their outputs come to under about 4 MiB, leaving the rest to the
// next transaction: the JSON of large outputs waiting their turn is not
// held beside the outputs themselves. The writer is a goroutine that runs
// while there is something to write. Observing never waits for the
// database; on EventRunFinished the journal writes what is left, then the
// status, before Observe returns (and so before [runner.Runner.Run]
// returns). Events are history: a crash may lose the last batch of them,
// never a committed task, and events that cannot be written never fail a
// task's commit.
//
// A Journal is safe for concurrent use. There is no useful zero Journal:
// create it with [NewJournal].
type Journal struct {
	s       Store
	runID   string
	version atomic.Int64 // of the plan whose execution commits tasks

	mu       sync.Mutex
	idle     sync.Cond // signalled when writing stops
	queue    []*commit // committed, not yet being written
	pending  []Event   // observed, not yet being written
	writing  bool      // a writer holds the commits and events being written
	err      error     // the first append, status or exchange error
	failures int       // how many such errors
}

// commit is a task state and whom to tell once it is written.
type commit struct {
	task   Task
	output any             // the task's output, encoded by the writer
	done   func(err error) // called once the state is written or refused
}

// maxTransactionBytes is about how many bytes of encoded outputs one
// transaction holds, beyond its first output.
const maxTransactionBytes = 4 << 20

var (
	_ runner.AsyncJournal = (*Journal)(nil)
	_ runner.Observer     = (*Journal)(nil)
)

// NewJournal returns the journal of run runID in s.
func NewJournal(s Store, runID string) *Journal {
	j := &Journal{s: s, runID: runID}
	j.idle.L = &j.mu
	return j
}

// RunID is the id of the journaled run.
func (j *Journal) RunID() string { return j.runID }

// CommitPlan implements [executor.Journal]: it records the plan version c
// with [Store.CommitPlan] — the canonical plan, and the repair that led to
// it (none for version 0) — and, once it is durable, makes it the
// journal's version: the task states committed after it are that
// version's. Until the first CommitPlan, they are version 0's, or
// [Journal.SetVersion]'s.
func (j *Journal) CommitPlan(ctx context.Context, c executor.PlanCommit) error {
	if c.Plan == nil {
		return fmt.Errorf("store: run %q: plan version %d: no plan", j.runID, c.Version)
	}
	plan, err := c.Plan.Canonical()
	if err != nil {
		return fmt.Errorf("store: run %q: plan version %d: %w", j.runID, c.Version, err)
	}
	var trial json.RawMessage
	if c.Trial != nil {
		if trial, err = marshal(c.Trial); err != nil {
			return fmt.Errorf("store: run %q: plan version %d: its trial: %w", j.runID, c.Version, err)
		}
	}
	if err := j.s.CommitPlan(ctx, j.runID, PlanVersion{Version: c.Version, Plan: plan, Trial: trial, TaskCount: len(c.Plan.Tasks)}); err != nil {
		return err
	}
	j.version.Store(int64(c.Version))
	return nil
}

// SetVersion makes v the journal's plan version without committing a
// plan: the journal of a resumed run goes on with the version the run
// adopted last.
func (j *Journal) SetVersion(v int) { j.version.Store(int64(v)) }

// Commit implements [runner.Journal]: it records c as the task's final state
// in the journal's plan version (see [Journal.CommitPlan]), the output as
// JSON and the error as text, and returns once it is durable, or once ctx
// ends (the write goes on).
// An output that cannot be written as JSON is an error, which halts the
// run: a result the journal cannot keep would be lost on resume.
func (j *Journal) Commit(ctx context.Context, c runner.Commit) error {
	answer := make(chan error, 1)
	j.CommitAsync(ctx, c, func(err error) { answer <- err })
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return fmt.Errorf("store: run %q: task %q: %w", j.runID, c.TaskID, context.Cause(ctx))
	}
}

// CommitAsync implements [runner.AsyncJournal]: it records c as
// [Journal.Commit] does, and calls done, on the writer's goroutine, once c
// is durable or cannot be.
func (j *Journal) CommitAsync(_ context.Context, c runner.Commit, done func(error)) {
	t := Task{
		ID: c.TaskID, Version: int(j.version.Load()), Status: string(c.Status), Attempts: c.Attempts, Diagnosis: c.Diagnosis,
		Started: c.Started, Duration: c.Duration,
		Tokens: Usage{Prompt: c.Usage.PromptTokens, Completion: c.Usage.CompletionTokens},
	}
	if c.Err != nil {
		t.Error = c.Err.Error()
	}
	j.mu.Lock()
	j.queue = append(j.queue, &commit{task: t, output: c.Output, done: done})
	if !j.writing {
		j.writing = true
		go j.drain()
	}
	j.mu.Unlock()
}

// EventData is the Data of the events the [Journal] appends: the fields of a
// [runner.Event] that are set, durations in nanoseconds. Outputs are not in
// events: a task's output is in its committed state.
type EventData struct {
	Phase     int           `json:"phase,omitempty"`
	Attempt   int           `json:"attempt,omitempty"`
	Duration  time.Duration `json:"duration_ns,omitempty"`
	Error     string        `json:"error,omitempty"`
	Diagnosis string        `json:"diagnosis,omitempty"`
	Passed    bool          `json:"passed,omitempty"` // on task_verified
	Status    string        `json:"status,omitempty"` // the run's, on run_finished
	Usage     Usage         `json:"usage,omitzero"`
	// RunID is the id the event's run ran under: the journaled run's, or
	// run.k for the run of the k-th repair plan of a run that replans.
	RunID string `json:"run_id,omitempty"`
	// Class, Version, Tasks, NewTasks and Halt are those of the
	// executor's events; on task_failed and task_skipped, Class is the
	// class of the task's failure ([runner.Classify] of its error).
	Class    string `json:"class,omitempty"`
	Version  int    `json:"version,omitempty"`
	Tasks    int    `json:"tasks,omitempty"`
	NewTasks int    `json:"new_tasks,omitempty"`
	Halt     string `json:"halt,omitempty"`
}

// Runner returns e as the runner's event it was journaled from: its run
// id the journaled run's when the event has none, its error the text the
// journal kept — a [*runner.ClassError] of the class the journal kept with
// it, on the final event of a task that failed or was skipped, so that
// [runner.Classify] gives the class it gave the runner's error. Output,
// Seq and AttemptEnded are not journaled.
func (e Event) Runner(runID string) (runner.Event, error) {
	var d EventData
	if len(e.Data) > 0 {
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return runner.Event{}, fmt.Errorf("store: event %d: %w", e.Seq, err)
		}
	}
	ev := runner.Event{
		Kind: runner.EventKind(e.Kind), Time: e.Time, RunID: cmp.Or(d.RunID, runID), TaskID: e.TaskID,
		Phase: d.Phase, Attempt: d.Attempt, Duration: d.Duration, Diagnosis: d.Diagnosis, Passed: d.Passed,
		Status: runner.Status(d.Status), Usage: agent.Usage{PromptTokens: d.Usage.Prompt, CompletionTokens: d.Usage.Completion},
		Class: runner.Class(d.Class), Version: d.Version, Tasks: d.Tasks, NewTasks: d.NewTasks, Halt: d.Halt,
	}
	if classInError(ev.Kind) {
		// The journal's annotation ([Journal.Observe]): the runner's
		// event has its class in its error.
		ev.Class = ""
	}
	if d.Error != "" {
		ev.Err = errors.New(d.Error)
		if d.Class != "" && classInError(ev.Kind) {
			ev.Err = &runner.ClassError{Class: runner.Class(d.Class), Err: ev.Err}
		}
	}
	return ev, nil
}

// classInError reports whether the class of a failure an event of kind k
// is about is in its error, which the journal keeps in its data: on the
// final event of a task that failed or was skipped.
func classInError(k runner.EventKind) bool {
	return k == runner.EventTaskFailed || k == runner.EventTaskSkipped
}

// Observe implements [runner.Observer].
func (j *Journal) Observe(e runner.Event) {
	d := EventData{Phase: e.Phase, Attempt: e.Attempt, Duration: e.Duration, Diagnosis: e.Diagnosis, Passed: e.Passed,
		Status: string(e.Status), Usage: Usage{Prompt: e.Usage.PromptTokens, Completion: e.Usage.CompletionTokens},
		Class: string(e.Class), Version: e.Version, Tasks: e.Tasks, NewTasks: e.NewTasks, Halt: e.Halt}
	if e.RunID != j.runID {
		d.RunID = e.RunID
	}
	if e.Err != nil {
		d.Error = e.Err.Error()
		if classInError(e.Kind) && d.Class == "" {
			// The class of a task's failure, which the runner's event
			// leaves to its error, is kept for [Store.Outcomes] and for
			// [Event.Runner].
			d.Class = string(runner.Classify(e.Err))
		}
	}
	data, err := marshal(d)
	if err != nil { // cannot happen: EventData is plain
		j.fail(err)
		return
	}
	ev := Event{Kind: string(e.Kind), Time: e.Time, TaskID: e.TaskID, Data: data}
	j.mu.Lock()
	j.pending = append(j.pending, ev)
	if e.Kind == runner.EventRunFinished {
		j.mu.Unlock()
		j.flush()
		if err := j.s.SetStatus(context.Background(), j.runID, string(e.Status), d.Error); err != nil {
			j.fail(err)
		}
		return
	}
	if !j.writing {
		j.writing = true
		go j.drain()
	}
	j.mu.Unlock()
}

// drain writes, as the writer, until there is nothing left to write.
func (j *Journal) drain() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(j.queue) > 0 || len(j.pending) > 0 {
		j.writeLocked(context.Background())
	}
	j.stopLocked()
}

// writeLocked writes the first commits of the queue, up to about
// maxTransactionBytes of outputs, and the pending events in one
// transaction. The caller is the writer and holds mu, which writeLocked
// releases while it writes.
func (j *Journal) writeLocked(ctx context.Context) {
	// Let the goroutines ready to run first: those about to commit join
	// this transaction rather than wait for the next one.
	j.mu.Unlock()
	runtime.Gosched()
	j.mu.Lock()
	queue, events := j.queue, j.pending
	j.queue, j.pending = nil, nil
	j.mu.Unlock()
	var (
		taken []*commit
		tasks []Task
		size  int
	)
	for len(queue) > 0 && (len(taken) == 0 || size < maxTransactionBytes) {
		e := queue[0]
		queue = queue[1:]
		t := e.task
		if e.output != nil {
			out, err := marshal(e.output)
			if err != nil {
				e.done(fmt.Errorf("store: run %q: task %q: its output of type %T cannot be journaled as JSON: %w", j.runID, t.ID, e.output, err))
				continue
			}
			t.Output = out
			size += len(out)
		}
		taken = append(taken, e)
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 && len(events) == 0 {
		j.mu.Lock()
		return
	}
	err := j.s.CommitBatch(ctx, j.runID, Batch{Tasks: tasks, Events: events})
	var eventErr error
	switch {
	case err == nil:
	case len(events) == 0:
	case len(tasks) == 0:
		eventErr = err
	default:
		// The events may be what failed: the commits must not fail for them.
		eventErr = err
		err = j.s.CommitBatch(ctx, j.runID, Batch{Tasks: tasks})
	}
	for _, e := range taken {
		e.done(err)
	}
	j.mu.Lock()
	// What was left waits before what arrived meanwhile.
	j.queue = append(queue, j.queue...)
	if eventErr != nil {
		j.failLocked(eventErr)
	}
}

// stopLocked ends the writer's turn. The caller is the writer and holds mu.
func (j *Journal) stopLocked() {
	j.writing = false
	j.idle.Broadcast()
}

// flush waits for the background writer and writes what is left.
func (j *Journal) flush() {
	j.mu.Lock()
	for j.writing {
		j.idle.Wait()
	}
	j.writing = true
	j.mu.Unlock()
	j.drain()
}

func (j *Journal) fail(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.failLocked(err)
}

func (j *Journal) failLocked(err error) {
	if j.err == nil {
		j.err = err
	}
	j.failures++
}

// Err returns the first error of appending events, setting the status or
// recording an LLM exchange (task commits fail the run instead), or nil.
// After the run has finished it covers every event.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failures > 1 {
		return fmt.Errorf("%w (and %d more journal errors)", j.err, j.failures-1)
	}
	return j.err
}

// marshal is JSON without HTML escaping.
func marshal(v any) (json.RawMessage, error) {
	return jsonv.Marshal(v)
}

// RecordLLM returns a client that forwards to c and records every exchange
// in the run before it answers: the exchanges [llm.Record] would record, each
// stored under its [llm.RequestKey] as the line llm.Record would write. An
// exchange that cannot be stored is returned with the answer as an error
// (and counted in Err).
func (j *Journal) RecordLLM(c llm.Client) llm.Client {
	return recordTo(c, func(ctx context.Context, key string, line []byte) error {
		if err := j.s.RecordExchange(context.WithoutCancel(ctx), j.runID, key, line); err != nil {
			j.fail(err)
			return err
		}
		return nil
	})
}

// Replayer returns a client that answers from the exchanges recorded in
// rec, as [llm.Replay] does from a recording: requests by their key, a
// request recorded several times with its answers in recorded order (then
// the last again), and an error wrapping [llm.ErrNotRecorded] for a request
// never recorded.
func Replayer(rec *Record) (llm.Client, error) {
	lines := make([][]byte, len(rec.Exchanges))
	for i, x := range rec.Exchanges {
		lines[i] = x.Exchange
	}
	c, err := replayLines("run "+rec.ID, lines)
	if err != nil {
		return nil, fmt.Errorf("store: replay run %q: %w", rec.ID, err)
	}
	return c, nil
}

// Resume returns what a run resumes from: the outputs of the tasks whose
// latest state ([Record.Tasks]) is done, by id, for
// [runner.WithInitialResults] (JSON decoded with UseNumber, as agents'
// outputs are), and the tasks waiting for a review decision, in the order
// of the latest plan ([Record.LatestPlan]). Tasks that failed, were skipped
// or were in flight are in neither: a resumed run runs them again.
func Resume(rec *Record) (outputs map[string]any, waiting []string, err error) {
	outputs = map[string]any{}
	for id, t := range rec.Tasks {
		switch t.Status {
		case string(runner.TaskDone):
			var v any
			if t.Output != nil {
				var err error
				if v, err = jsonv.DecodeBytes(t.Output); err != nil {
					return nil, nil, fmt.Errorf("store: resume run %q: task %q: its output is not valid JSON: %w", rec.ID, id, err)
				}
			}
			outputs[id] = v
		case string(runner.TaskWaiting):
			waiting = append(waiting, id)
		}
	}
	order := planOrder(rec.LatestPlan())
	slices.SortFunc(waiting, func(a, b string) int {
		ia, oka := order[a]
		ib, okb := order[b]
		switch {
		case oka && okb:
			return ia - ib
		case oka != okb: // tasks of the plan first
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return outputs, waiting, nil
}

// planOrder maps the ids of a canonical plan's tasks to their positions.
func planOrder(p json.RawMessage) map[string]int {
	var v struct {
		Tasks []struct {
			ID string `json:"id"`
		} `json:"tasks"`
	}
	if json.Unmarshal(p, &v) != nil {
		return nil
	}
	m := make(map[string]int, len(v.Tasks))
	for i, t := range v.Tasks {
		m[t.ID] = i
	}
	return m
}
