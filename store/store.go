// Package store keeps runs durable: the journal of every run — its plan,
// its events, each task's final state, its LLM exchanges — so that a run
// survives a crash and can be resumed, reviewed later, inspected and
// replayed. The runner knows nothing of it: a [Journal] commits each task's
// final state through [runner.WithJournal] and, as an observer, appends the
// events and the run's status; [Store.Load] and [Resume] feed a resumed run its
// initial results; [Replayer] answers a replay from the recorded exchanges.
// [SQLite] ([Open]) is the embedded [Store]; storetest is the conformance kit of
// any other.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Errors callers branch on.
var (
	// ErrNotFound: no run has that id.
	ErrNotFound = errors.New("run not found")
	// ErrExists: a run with that id exists already.
	ErrExists = errors.New("run exists already")
)

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
	// Options, when set, must be JSON.
	CreateRun(ctx context.Context, r Run) error
	// AppendEvents adds events to a run's timeline, in order. The store
	// numbers them: each event's Seq is ignored and the run's timeline
	// goes on from its last Seq (a resumed run's events follow the first
	// run's).
	AppendEvents(ctx context.Context, runID string, events []Event) error
	// CommitTask records a task's final state durably: when it returns
	// nil, the state survives a crash. A later commit of the same task
	// replaces it.
	CommitTask(ctx context.Context, runID string, t Task) error
	// SetStatus records the run's status (and error text) and when it
	// changed.
	SetStatus(ctx context.Context, runID, status, errText string) error
	// RecordExchange keeps one LLM exchange of the run under its request
	// key, in order, for replay.
	RecordExchange(ctx context.Context, runID, key string, exchange json.RawMessage) error
	// Load returns a run with its tasks, events and exchanges.
	Load(ctx context.Context, runID string) (*Record, error)
	// List returns the runs, newest first.
	List(ctx context.Context) ([]Summary, error)
	Close() error
}

// Run is what a run starts with.
type Run struct {
	ID      string
	Plan    json.RawMessage // the canonical plan: {"tasks": [...], ...}
	Mission string
	// Options are the run's settings (registry path, concurrency, ...),
	// as the CLI needs them to resume.
	Options json.RawMessage
	Created time.Time
}

// Task is a task's final state.
type Task struct {
	ID       string
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
	Run
	Status string
	Error  string
	// Updated is when the status last changed or a task was committed.
	Updated time.Time
	// Tasks holds the committed tasks by id; a task never committed (not
	// yet run, or in flight when the process died) is absent.
	Tasks     map[string]Task
	Events    []Event    // by Seq
	Exchanges []Exchange // by Seq
}

// Summary is a line of [Store.List].
type Summary struct {
	ID       string
	Created  time.Time
	Updated  time.Time
	Status   string
	Done     int // tasks done
	Total    int // tasks of the plan (0 when the plan has no "tasks" list)
	Mission  string
	PlanHash string // hex sha256 of the plan, first 12 digits
}
