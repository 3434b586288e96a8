// Package store keeps runs durable: the journal of every run — its spec,
// every version of its plan, its events, each task's final state in every
// plan version that ran it, its LLM exchanges — so that a run survives a
// crash and can be resumed, reviewed later, inspected and replayed. The
// runner knows nothing of it: a [Journal] commits each task's final state
// through [runner.WithJournal] and, as an observer, appends the events and
// the run's status; [Journal.CommitPlan] keeps each plan a replanning run
// adopts; [Store.Load] and [Resume] feed a resumed run its initial results;
// [Replayer] answers a replay from the recorded exchanges; [Store.Acquire]
// gives a run one owner at a time; [Store.RecordProcess] keeps the programs
// its attempts started until they are known to have ended.
//
// This package is the [Store] interface, its types and errors, and what is
// written against the interface alone; it links no database. The embedded
// implementation, a SQLite file, is package
// [github.com/dagent-dev/dagent/store/sqlite]; package
// [github.com/dagent-dev/dagent/store/storetest] is the conformance kit of
// any implementation.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Errors callers branch on ([errors.Is]). They are part of the [Store]
// contract: every implementation returns them, so a caller matches them
// without knowing which store it has. An error of one implementation alone,
// such as a database schema it cannot read, is that implementation's.
var (
	// ErrNotFound: no run has that id.
	ErrNotFound = errors.New("run not found")
	// ErrExists: a run with that id exists already.
	ErrExists = errors.New("run exists already")
	// ErrOwned: another owner holds the run's lease; the error is an
	// [*OwnedError] that names it.
	ErrOwned = errors.New("the run has another owner")
	// ErrNotOwner: the owner given does not hold the run's lease (any
	// more): it was taken over.
	ErrNotOwner = errors.New("the run's lease is not held by this owner")
	// ErrReadOnly: the store was opened to be read only (the embedded
	// store's sqlite.ReadOnly option); its methods that write fail with it.
	ErrReadOnly = errors.New("the store is open read-only")
	// ErrNotCached: no plan is cached under the key ([Store.CachedPlan]).
	ErrNotCached = errors.New("no plan cached under the key")
)

// OwnedError is [Store.Acquire] refusing a run that another owner holds.
type OwnedError struct {
	RunID string
	Owner Owner
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("run %s is owned by process %d on %s, which took it at %s and was last heard of at %s",
		e.RunID, e.Owner.PID, e.Owner.Host, e.Owner.Started.Local().Format(time.DateTime), e.Owner.Heartbeat.Local().Format(time.DateTime))
}

// Is makes an OwnedError match [ErrOwned].
func (e *OwnedError) Is(target error) bool { return target == ErrOwned }

// Owner is the holder of a run's lease: the process that runs it. A run
// has at most one owner; the lease is taken with [Store.Acquire], kept
// fresh with [Store.Heartbeat] and given up with [Store.Release].
type Owner struct {
	// ID tells this lease from any other, of any process: a random token,
	// new for each acquisition.
	ID   string
	PID  int
	Host string
	// Started is when the owner took the run; Heartbeat when it last said
	// it is alive. A zero value is the current time.
	Started   time.Time
	Heartbeat time.Time
}

// StatusRunning is the status of a run from [Store.CreateRun] until
// [Store.SetStatus]; a run whose process died keeps it. The other statuses are
// the runner's (completed, failed, waiting, replan_required).
const StatusRunning = "running"

// Store is where runs are kept. Implementations must be safe for
// concurrent use, also by several processes on one database. The methods
// given a run's id (CreateRun excepted) fail with [ErrNotFound] ([errors.Is])
// when it does not exist. Close may be called more than once.
type Store interface {
	// CreateRun records a new run, with status [StatusRunning]; [ErrExists]
	// if its id is taken. A zero Created is the current time; Plan and
	// Spec, when set, must be JSON. A run created with a plan has it as
	// its plan version 0, committed with the run at once: no crash leaves
	// the run without it.
	CreateRun(ctx context.Context, r Run) error
	// CommitPlan records a version of the run's plan durably: when it
	// returns nil, the version survives a crash. Versions are numbered
	// from 0 without gaps: v.Version may be any version already committed,
	// whose plan and trial it then replaces, or the next one. The plan
	// must be JSON, and the trial, when set.
	CommitPlan(ctx context.Context, runID string, v PlanVersion) error
	// AppendEvents adds events to a run's timeline, in order. The store
	// numbers them: each event's Seq is ignored and the run's timeline
	// goes on from its last Seq (a resumed run's events follow the first
	// run's).
	AppendEvents(ctx context.Context, runID string, events []Event) error
	// CommitTask records a task's final state in the plan version
	// t.Version durably: when it returns nil, the state survives a crash.
	// A later commit of the same task in the same version replaces it;
	// the task's states in other versions are kept.
	CommitTask(ctx context.Context, runID string, t Task) error
	// CommitBatch records the batch's task states as CommitTask does, in
	// order, and appends its events as AppendEvents does, all at once and
	// durably: when it returns nil, all of them survive a crash; when it
	// fails, none of them was recorded. A batch lets many commits share
	// one transaction (see [Journal]); an empty batch does nothing.
	CommitBatch(ctx context.Context, runID string, b Batch) error
	// SetStatus records the run's status (and error text) and when it
	// changed.
	SetStatus(ctx context.Context, runID, status, errText string) error
	// RecordExchange keeps one LLM exchange of the run under its request
	// key, in order, for replay.
	RecordExchange(ctx context.Context, runID, key string, exchange json.RawMessage) error
	// Load returns a run with its plan versions, tasks, events and
	// exchanges.
	Load(ctx context.Context, runID string) (*Record, error)
	// List returns the runs, newest first.
	List(ctx context.Context) ([]Summary, error)
	// Runs returns the summaries of the runs q selects, newest first: at
	// most q.Limit of them (0: all) after the first q.Offset, with how many
	// runs q selects in all. A query with a negative limit or offset is
	// an error.
	Runs(ctx context.Context, q RunQuery) ([]Summary, int, error)
	// Acquire makes o the owner of the run, atomically: when the run has
	// no owner, when its owner is o itself (the same ID), or when dead
	// reports its owner dead (nil: no owner is). Otherwise it fails with an
	// [*OwnedError] naming the owner, and changes nothing. dead is called
	// inside the store's transaction: it must be quick and must not use the
	// store.
	Acquire(ctx context.Context, runID string, o Owner, dead func(Owner) bool) error
	// Heartbeat records that o, the run's owner, is alive now; [ErrNotOwner]
	// when o does not hold the run's lease.
	Heartbeat(ctx context.Context, runID string, o Owner) error
	// Release gives up o's lease on the run; it does nothing when o does
	// not hold it.
	Release(ctx context.Context, runID string, o Owner) error
	// RecordProcess records durably, in order, a program an attempt of
	// one of the run's tasks started, so that the process that resumes
	// the run after a crash can kill what is left of it.
	RecordProcess(ctx context.Context, runID string, p Process) error
	// ForgetProcesses forgets every process recorded for the run: those
	// that are known to have ended, or were killed.
	ForgetProcesses(ctx context.Context, runID string) error
	// EventsAfter returns the run's events whose Seq is above after, in
	// order: what was appended since a reader last read event after.
	EventsAfter(ctx context.Context, runID string, after int) ([]Event, error)
	// DeleteRun deletes the run with all it holds (plan versions, tasks,
	// events, exchanges, lease, processes), atomically, unless another
	// process owns it: when the run has an owner that dead does not report
	// dead (nil: none is), it fails with an [*OwnedError] and deletes
	// nothing. dead is called as in Acquire.
	DeleteRun(ctx context.Context, runID string, dead func(Owner) bool) error
	// RequestCancel asks o, the run's owner, to cancel the run: the
	// owner's CancelRequested reports it from then on. It fails with
	// [ErrNotOwner] when o does not hold the run's lease (any more). A
	// request is for one owner: the next Acquire of the run forgets it.
	RequestCancel(ctx context.Context, runID string, o Owner) error
	// CancelRequested reports whether a cancel of the run was requested
	// of o, its owner; [ErrNotOwner] when o does not hold the run's lease.
	CancelRequested(ctx context.Context, runID string, o Owner) (bool, error)
	// Outcomes returns how the tasks of the newest runs ended: of the runs
	// most recently created, at most runs of them (runs <= 0: none), each
	// committed task state as a [TaskOutcome], newest run first, then by
	// plan version and task id.
	Outcomes(ctx context.Context, runs int) ([]TaskOutcome, error)
	// CachePlan keeps p under its key, replacing what the key held.
	CachePlan(ctx context.Context, p CachedPlan) error
	// CachedPlan returns the plan kept under key; [ErrNotCached] when
	// there is none.
	CachedPlan(ctx context.Context, key string) (*CachedPlan, error)
	Close() error
}

// Process is a program that an attempt of a run's task started, in a
// process group of its own whose id is the program's pid ([Store.RecordProcess]).
// The host, the boot and the program's start time tell the group apart
// from a later one that got the same id.
type Process struct {
	TaskID  string
	Attempt int
	Key     string // the attempt's idempotency key
	PGID    int    // the process group's id: the program's pid
	Host    string
	// BootID names the boot of the host the program ran in (Linux's
	// /proc/sys/kernel/random/boot_id); empty where there is none.
	BootID string
	// Start is when the program started, in the system's own unit (on
	// Linux, clock ticks since boot); 0 when unknown.
	Start int64
	// Recorded is when the process was recorded; a zero value is the
	// current time.
	Recorded time.Time
}

// Run is what a run starts with.
type Run struct {
	ID string
	// Plan is the canonical plan the run starts with, {"tasks": [...], ...};
	// nil for a run that has none yet. The store keeps it once, as the
	// run's plan version 0 ([Store.CreateRun]).
	Plan json.RawMessage
	// TaskCount counts the tasks of Plan, for [Summary.Total], from a
	// caller that has the plan parsed: the store trusts it rather than
	// read the plan again. 0: the store counts them.
	TaskCount int
	Mission   string
	// Spec is everything the run needs to start again, in another process
	// if need be: a versioned JSON document that the store keeps as it is
	// given, without reading it.
	Spec    json.RawMessage
	Created time.Time
}

// PlanVersion is a version of a run's plan. A run that never replans has
// at most version 0, its first plan; each repair a replanning run adopts is
// the next version.
type PlanVersion struct {
	Version int
	Plan    json.RawMessage // the canonical plan
	// TaskCount counts the tasks of Plan, as [Run.TaskCount] does; 0: the
	// store counts them.
	TaskCount int
	// Trial is the repair that led to this version, as JSON; nil for
	// version 0.
	Trial json.RawMessage
	// Committed is when the version was committed; a zero value is the
	// current time.
	Committed time.Time
}

// Task is a task's final state in one execution of the run's plan.
type Task struct {
	ID string
	// Version is the plan version whose execution committed the state.
	Version  int
	Status   string // the runner's TaskStatus: done, failed, skipped, waiting
	Attempts int
	// Output is the task's output as JSON; nil when it has none.
	Output    json.RawMessage
	Error     string
	Diagnosis string
	Started   time.Time
	Duration  time.Duration
	Tokens    Usage
	// Committed is when the state was committed; a zero value is the
	// current time.
	Committed time.Time
}

// Batch is what [Store.CommitBatch] records at once: task states, each
// replacing the state of its task in its version (a later state in Tasks
// replaces an earlier one of the same task and version), and events to
// append to the run's timeline, in order.
type Batch struct {
	Tasks  []Task
	Events []Event
}

// Usage counts tokens.
type Usage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
}

// Event is one entry of a run's timeline.
type Event struct {
	// Seq numbers the run's events from 1; the store assigns it.
	Seq    int
	Kind   string
	Time   time.Time
	TaskID string
	// Data holds the rest of the event (attempt, error, diagnosis, ...)
	// as JSON; the [Journal] writes an [EventData].
	Data json.RawMessage
}

// Exchange is one recorded LLM exchange.
type Exchange struct {
	Seq int // from 1 in the run, assigned by the store
	Key string
	// Exchange is the JSON of the exchange; the [Journal] writes a line of
	// [llm.Record]'s format: {"key", "request", "response", "error"}.
	Exchange json.RawMessage
}

// Record is a run as stored.
type Record struct {
	// Run is what the run started with. Its Plan is the plan it was
	// created with: its plan version 0's, the bytes of Plans[0].Plan — or,
	// for a run journaled by a dagent that kept that plan apart from its
	// versions, that copy. Its TaskCount, and each version's, are the
	// counts the store keeps.
	Run
	Status string
	Error  string
	// Updated is when the status last changed, or a task or a plan
	// version was committed.
	Updated time.Time
	// Plans holds the committed plan versions, by Version; empty for a run
	// that committed none.
	Plans []PlanVersion
	// Tasks holds the latest state of each committed task, by id: its
	// state in the highest plan version that committed it. A task never
	// committed (not yet run, or in flight when the process died) is
	// absent.
	Tasks map[string]Task
	// Commits holds every committed state, of every plan version: by
	// Version, then by task id.
	Commits   []Task
	Events    []Event    // by Seq
	Exchanges []Exchange // by Seq
	// Owner holds the run's lease; nil when no process does.
	Owner *Owner
	// Processes holds the programs recorded for the run and not yet
	// forgotten, in the order they were recorded.
	Processes []Process
}

// LatestPlan returns the canonical plan the run is at: its highest
// committed plan version's, or the plan it started with when it committed
// none.
func (r *Record) LatestPlan() json.RawMessage {
	if n := len(r.Plans); n > 0 {
		return r.Plans[n-1].Plan
	}
	return r.Plan
}

// Summary is a run as [Store.List] and [Store.Runs] list it.
type Summary struct {
	ID      string
	Created time.Time
	Updated time.Time
	Status  string
	Done    int // tasks whose latest state is done
	// Total counts the tasks of the run's latest plan (see
	// [Record.LatestPlan]); 0 when it has no "tasks" list.
	Total    int
	Mission  string
	PlanHash string // hex sha256 of the latest plan, first 12 digits
	// Owner holds the run's lease; nil when no process does.
	Owner *Owner
}

// RunQuery selects runs for [Store.Runs]. Its zero value selects every run.
type RunQuery struct {
	// Statuses keeps the runs whose status, as the journal holds it, is
	// one of these; none: any status.
	Statuses []string
	// Prefix keeps the runs whose id begins with it.
	Prefix string
	// UpdatedBefore keeps the runs last updated ([Summary.Updated])
	// before it; the zero time: any.
	UpdatedBefore time.Time
	// UpdatedAfter keeps the runs last updated after it; the zero time:
	// any. A reader that polls the journal asks it for the runs that
	// changed since it last read.
	UpdatedAfter time.Time
	// IDs keeps the runs of these ids; none: any id.
	IDs []string
	// Exclude leaves out the runs of these ids.
	Exclude []string
	// Limit is how many summaries to return at most (0: all of them);
	// Offset how many of the runs selected, newest first, to skip before
	// them. Neither may be negative.
	Limit, Offset int
}

// TaskOutcome is how a task ended in one plan version of a run
// ([Store.Outcomes]).
type TaskOutcome struct {
	RunID   string
	Version int
	TaskID  string
	// Agent is the task's agent (a worker of the catalog or an LLM agent
	// of the plan) in that plan version; Tools are the tools the plan gives
	// that agent, none for a worker.
	Agent  string
	Tools  []string
	Status string // the runner's TaskStatus
	// Class is the class of the task's failure as the run's events
	// recorded it (their data's "class"); empty when none did.
	Class string
	Error string
}

// CachedPlan is an accepted plan kept for reuse ([Store.CachePlan]).
type CachedPlan struct {
	// Key is what the plan is found under: its user derives it from what
	// the plan was written for.
	Key     string
	Mission string
	Plan    json.RawMessage // the canonical plan
	RunID   string          // the run whose plan it was
	// Stored is when the plan was cached; a zero value is the current
	// time.
	Stored time.Time
}
