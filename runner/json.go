package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
)

// ResultVersion is the version of the JSON form of a [Result] that
// [Result.MarshalJSON] writes, and the newest [Result.UnmarshalJSON] reads.
const ResultVersion = 1

// ErrResultVersion is the error of [Result.UnmarshalJSON] for a document
// of a version newer than [ResultVersion], or not a version at all.
var ErrResultVersion = errors.New("unsupported result version")

// resultDoc is the JSON form of a Result. The order of its fields is the
// order of the keys in the document.
type resultDoc struct {
	Version        int                    `json:"version"`
	RunID          string                 `json:"run_id"`
	Status         Status                 `json:"status"`
	Error          *string                `json:"error"`
	DurationMS     int64                  `json:"duration_ms"`
	Tasks          map[string]*TaskResult `json:"tasks"`
	PendingReviews []PendingReview        `json:"pending_reviews"`
	Replan         *ReplanRequest         `json:"replan"`
}

type taskDoc struct {
	Status     TaskStatus  `json:"status"`
	Attempts   int         `json:"attempts"`
	Output     any         `json:"output"`
	Error      *string     `json:"error"`
	Class      Class       `json:"class,omitempty"`
	Diagnosis  string      `json:"diagnosis"`
	DurationMS int64       `json:"duration_ms"`
	Usage      agent.Usage `json:"usage,omitzero"`
}

type reviewDoc struct {
	TaskID   string         `json:"task_id"`
	Prompt   string         `json:"prompt"`
	Upstream map[string]any `json:"upstream"`
}

type replanDoc struct {
	TaskID    string   `json:"task_id"`
	Output    any      `json:"output"`
	Diagnosis string   `json:"diagnosis"`
	Completed []string `json:"completed"`
}

// MarshalJSON writes r in the one JSON form of a run's result, which
// dagent run --format json prints and [Result.UnmarshalJSON] reads back:
//
//	{"version": 1, "run_id", "status", "error", "duration_ms",
//	 "tasks": {ID: TaskResult}, "pending_reviews": [PendingReview],
//	 "replan": ReplanRequest or null}
//
// Errors are their text, or null; durations are whole milliseconds. The
// tasks are in the form of [TaskResult.MarshalJSON]. Started, and Usage
// apart from the tasks' own, are not written. <, > and & are written as
// they are, unless the caller's encoder escapes HTML, as json.Marshal does.
func (r Result) MarshalJSON() ([]byte, error) {
	doc := resultDoc{
		Version:        ResultVersion,
		RunID:          r.RunID,
		Status:         r.Status,
		Error:          errText(r.Err),
		DurationMS:     r.Duration.Milliseconds(),
		Tasks:          r.Tasks,
		PendingReviews: r.PendingReviews,
		Replan:         r.Replan,
	}
	if doc.Tasks == nil {
		doc.Tasks = map[string]*TaskResult{}
	}
	if doc.PendingReviews == nil {
		doc.PendingReviews = []PendingReview{}
	}
	return jsonv.Marshal(doc)
}

// UnmarshalJSON reads r from the JSON form [Result.MarshalJSON] writes,
// numbers of outputs kept exact as [json.Number]. A document without a
// version is read as version 1; a newer one is an error matching
// [ErrResultVersion]. Each task's ID is its key in "tasks", and Usage is
// the sum of the tasks' usage. An error comes back as an error whose text
// is the one written: errors.Is and errors.As against the original error
// do not survive the round trip, and durations keep whole milliseconds.
func (r *Result) UnmarshalJSON(data []byte) error {
	var v struct {
		Version *json.Number `json:"version"`
	}
	if err := decode(data, &v); err != nil {
		return err
	}
	if v.Version != nil {
		n, err := v.Version.Int64()
		if err != nil || n < 1 || n > ResultVersion {
			return fmt.Errorf("%w %s: this reads versions up to %d", ErrResultVersion, *v.Version, ResultVersion)
		}
	}
	var doc resultDoc
	if err := decode(data, &doc); err != nil {
		return err
	}
	*r = Result{
		RunID:          doc.RunID,
		Status:         doc.Status,
		Err:            textErr(doc.Error),
		Duration:       time.Duration(doc.DurationMS) * time.Millisecond,
		Tasks:          doc.Tasks,
		PendingReviews: doc.PendingReviews,
		Replan:         doc.Replan,
	}
	if r.Tasks == nil {
		r.Tasks = map[string]*TaskResult{}
	}
	for id, t := range r.Tasks {
		if t == nil {
			return fmt.Errorf("task %s is null", id)
		}
		t.ID = id
		r.Usage = r.Usage.Add(t.Usage)
	}
	return nil
}

// ParseInitialResults reads the initial results of a run, for
// [WithInitialResults], from data: a JSON object of task id to output, or
// a result in the JSON form [Result.MarshalJSON] writes — the result of an
// earlier run, whose done tasks give their outputs and whose run id is
// returned too, so that the run goes on under it. A document is read as a
// result when it has a "status" string and a "tasks" object; runID is
// empty for an object of outputs. Numbers keep their exact text, as
// [json.Number]; a result of a version newer than [ResultVersion] is an
// error matching [ErrResultVersion].
func ParseInitialResults(data []byte) (outputs map[string]any, runID string, err error) {
	v, err := jsonv.DecodeBytes(data)
	if err != nil {
		return nil, "", err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", errors.New("want an object of task id to output, or a dagent run result")
	}
	_, isResult := m["tasks"].(map[string]any)
	if _, hasStatus := m["status"].(string); !isResult || !hasStatus {
		return m, "", nil
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, "", err
	}
	return res.Outputs(), res.RunID, nil
}

// MarshalJSON writes t as a task of a result's "tasks":
//
//	{"status", "attempts", "output", "error", "class", "diagnosis",
//	 "duration_ms", "usage": {"prompt_tokens", "completion_tokens"}}
//
// without its ID, which is its key there. "class" is left out when Class
// is empty, "usage" when the task used no tokens; Started is not written.
func (t TaskResult) MarshalJSON() ([]byte, error) {
	return jsonv.Marshal(taskDoc{
		Status: t.Status, Attempts: t.Attempts, Output: t.Output, Error: errText(t.Err), Class: t.Class,
		Diagnosis: t.Diagnosis, DurationMS: t.Duration.Milliseconds(), Usage: t.Usage,
	})
}

// UnmarshalJSON reads t from the form [TaskResult.MarshalJSON] writes,
// leaving ID empty; errors and durations come back as with
// [Result.UnmarshalJSON].
func (t *TaskResult) UnmarshalJSON(data []byte) error {
	var doc taskDoc
	if err := decode(data, &doc); err != nil {
		return err
	}
	*t = TaskResult{
		Status: doc.Status, Attempts: doc.Attempts, Output: doc.Output, Err: textErr(doc.Error), Class: doc.Class,
		Diagnosis: doc.Diagnosis, Duration: time.Duration(doc.DurationMS) * time.Millisecond, Usage: doc.Usage,
	}
	return nil
}

// MarshalJSON writes p as {"task_id", "prompt", "upstream"}.
func (p PendingReview) MarshalJSON() ([]byte, error) {
	return jsonv.Marshal(reviewDoc(p))
}

// UnmarshalJSON reads p from the form [PendingReview.MarshalJSON] writes.
func (p *PendingReview) UnmarshalJSON(data []byte) error {
	var doc reviewDoc
	if err := decode(data, &doc); err != nil {
		return err
	}
	*p = PendingReview(doc)
	return nil
}

// MarshalJSON writes q as {"task_id", "output", "diagnosis", "completed"},
// "completed" a list even when empty.
func (q ReplanRequest) MarshalJSON() ([]byte, error) {
	doc := replanDoc(q)
	doc.Completed = slices.Clip(append([]string{}, q.Completed...))
	return jsonv.Marshal(doc)
}

// UnmarshalJSON reads q from the form [ReplanRequest.MarshalJSON] writes.
func (q *ReplanRequest) UnmarshalJSON(data []byte) error {
	var doc replanDoc
	if err := decode(data, &doc); err != nil {
		return err
	}
	*q = ReplanRequest(doc)
	return nil
}

// decode reads data into v with numbers kept exact.
func decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

func errText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// textError is an error read back from its text.
type textError string

func (e textError) Error() string { return string(e) }

func textErr(s *string) error {
	if s == nil {
		return nil
	}
	return textError(*s)
}
