package durable

import (
	"encoding/json"
	"time"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store"
)

// DocVersion is the version of the form of this package's JSON documents
// ([RunDoc], [TaskDetailDoc]): a document of another form has another
// version.
const DocVersion = 1

// DocOptions are what a document leaves out.
type DocOptions struct {
	// NoOutputs leaves the tasks' outputs out: each is null.
	NoOutputs bool
}

// RunDoc is a journaled run as one JSON document: the document of dagent
// show --format json.
type RunDoc struct {
	Version int    `json:"version"` // DocVersion
	RunID   string `json:"run_id"`
	// Status is the journal's: running for an interrupted run too (see
	// [Run.Shown]); Live says whether a live process owns the run.
	Status  Status          `json:"status"`
	Live    bool            `json:"live"`
	Owner   *Owner          `json:"owner"`
	Error   *string         `json:"error"` // null when the run has none
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
	Mission string          `json:"mission"`
	Options json.RawMessage `json:"options"` // the run's spec document, with its plan
	Plan    *plan.Plan      `json:"plan"`    // the plan the run started with
	// Tasks holds every task of every plan of the run, by id; Order lists
	// them as [Run.Order] does.
	Tasks     map[string]TaskDoc `json:"tasks"`
	Order     []string           `json:"order"`
	Events    []EventDoc         `json:"events"`
	Exchanges int                `json:"llm_exchanges"` // how many LLM exchanges were recorded
}

// TaskDoc is a task of a run in a [RunDoc]: its [TaskView].
type TaskDoc struct {
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts"`
	Output     json.RawMessage `json:"output"`
	Error      *string         `json:"error"`
	Diagnosis  string          `json:"diagnosis"`
	Started    *time.Time      `json:"started"`
	DurationMS int64           `json:"duration_ms"`
	Usage      store.Usage     `json:"usage"`
	// Committed is when the task's state was committed; null for a task
	// whose state comes from the events.
	Committed *time.Time `json:"committed"`
}

// EventDoc is an event of a run's timeline in the documents.
type EventDoc struct {
	Seq    int             `json:"seq"`
	Kind   string          `json:"kind"`
	Time   time.Time       `json:"time"`
	TaskID string          `json:"task_id,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// NewEventDoc returns e as the documents show it.
func NewEventDoc(e store.Event) EventDoc {
	return EventDoc{Seq: e.Seq, Kind: e.Kind, Time: e.Time, TaskID: e.TaskID, Data: e.Data}
}

// Document returns r as one JSON document. Its "options" are the run's
// spec document as the run was given it, with its plan, and its "plan" the
// plan the run started with. Whether a live process owns the run is
// asked of the system now, as [Run.Shown] does.
func (r *Run) Document(o DocOptions) RunDoc {
	rec, first := r.Record, r.Spec.Plan
	if len(r.Plans) > 0 {
		first = r.Plans[0]
	}
	_, live := r.Shown()
	doc := RunDoc{
		Version: DocVersion, RunID: r.ID, Status: r.Status, Live: live, Owner: ownerOf(rec.Owner), Error: textOrNil(r.Error),
		Created: r.Created, Updated: r.Updated, Mission: rec.Mission, Options: r.specDoc(), Plan: first,
		Tasks: make(map[string]TaskDoc, len(r.Tasks)), Order: r.Order, Events: []EventDoc{}, Exchanges: len(rec.Exchanges),
	}
	for id, v := range r.Tasks {
		doc.Tasks[id] = v.doc(o)
	}
	for _, e := range rec.Events {
		doc.Events = append(doc.Events, NewEventDoc(e))
	}
	return doc
}

func (v TaskView) doc(o DocOptions) TaskDoc {
	d := TaskDoc{
		Status: v.Status, Attempts: v.Attempts, Output: outputOrNull(v.Output, o.NoOutputs), Error: textOrNil(v.Error), Diagnosis: v.Diagnosis,
		Started: timeOrNil(v.Started), DurationMS: v.Duration.Milliseconds(), Usage: v.Tokens,
	}
	if v.Committed {
		d.Committed = timeOrNil(v.Task.Committed)
	}
	return d
}

// specDoc is the spec document of r as the run was given it, with its
// plan: the journal keeps the plan a run starts with once, as its plan
// version 0, and the spec beside it without the plan.
func (r *Run) specDoc() json.RawMessage {
	raw := rawOrNull(r.Record.Spec)
	if r.Spec.Plan == nil {
		return raw
	}
	var head struct {
		Version json.RawMessage `json:"version"`
		Plan    json.RawMessage `json:"plan"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Version == nil || string(head.Plan) != "null" {
		return raw // a spec that holds its plan, or one of before versioned specs
	}
	var spec Spec
	if json.Unmarshal(raw, &spec) != nil {
		return raw
	}
	spec.Plan = r.Spec.Plan
	doc, err := json.Marshal(spec)
	if err != nil {
		return raw
	}
	return doc
}

func rawOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// outputOrNull is an output in the documents: null when left out.
func outputOrNull(b json.RawMessage, leftOut bool) json.RawMessage {
	if leftOut {
		return json.RawMessage("null")
	}
	return rawOrNull(b)
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func textOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
