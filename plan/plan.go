package plan

import (
	"encoding/json"
	"fmt"
	"time"
)

// DefaultAgent is the agent a task runs on when it names none. It needs no
// definition in the plan.
const DefaultAgent = "default"

// DefaultMaxRetries is the number of retries after the first attempt a task
// gets when the plan does not say.
const DefaultMaxRetries = 2

// Plan is the canonical form of a plan. The zero Plan has no tasks, which
// [Plan.Validate] reports; get a plan from [Parse], or build one in Go from
// tasks made by [NewTask].
type Plan struct {
	// Mission says what the plan is for. Optional.
	Mission string `json:"mission,omitempty"`
	// Agents are the LLM sub-agents the plan defines, by name.
	Agents map[string]Agent `json:"agents,omitempty"`
	// Tasks in source order.
	Tasks []Task `json:"tasks"`
	// Unknown lists the keys [Parse] dropped: keys it does not know, and
	// aliases shadowed by a stronger key for the same field ("name" beside
	// "id"). A misspelled key ("depend_on") silently loses meaning, so
	// linters report these; they are not part of the canonical form.
	Unknown []UnknownKey `json:"-"`
}

// Agent is an LLM sub-agent defined in the plan. Tools name entries of the
// host's trusted registry; a plan can name tools, never define them.
type Agent struct {
	Prompt      string   `json:"prompt,omitempty"`
	Description string   `json:"description,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	Model       string   `json:"model,omitempty"`
}

// Task is one node of the plan. Tasks built in Go should start from [NewTask]
// so that the defaults [Parse] applies (critical, two retries, ...) hold.
type Task struct {
	ID        string
	Agent     string
	Input     string
	DependsOn []string
	// When is a condition in the language of Verification, over the
	// results of the task's dependencies (data/depends) and its input
	// (data/input): the runner runs the task only when it passes, and
	// skips it, its agent never called, when it does not. Empty means the
	// task always runs.
	When      string
	Type      TaskType
	OnFailure Policy
	// MaxRetries is the number of retries after the first attempt, used when
	// OnFailure or OnVerificationFailure is [PolicyRetry].
	MaxRetries int
	// Critical tasks halt the run when they fail for good.
	Critical bool
	// Timeout bounds one attempt; zero means the runner's default.
	Timeout time.Duration
	// Verification is a predicate in dagent's Lisp (see package verify).
	Verification          string
	OnVerificationFailure Policy
	// Inputs wires values of upstream results into the task, by slot name.
	Inputs map[string]InputRef
	// Params are free-form parameters handed to the agent. Numbers are
	// [json.Number] so that no precision is lost.
	Params map[string]any
	// OutputSchema is a JSON Schema, a JSON object, that the task's result
	// must satisfy; an LLM sub-agent requests it as structured output. [Parse]
	// keeps it as written (key order and string escapes included) but
	// compact; nil means the task has none and its result is free-form.
	// [Plan.Validate] checks that it is a JSON object within [Limits.MaxInputBytes].
	OutputSchema json.RawMessage
	// Priority orders the tasks ready to start at once: a higher one
	// starts first, and tasks of equal priority start in plan order. The
	// default, 0, leaves the task in plan order.
	Priority int
	// Rubric says, in words, what a good result is, for an LLM judge to
	// check once the verification predicate passes: the third layer of
	// verification, after output_schema and the predicate. A runner
	// without a judge leaves it unchecked; empty means the task has none.
	Rubric string
	// Pos is where the task starts in the parsed source; zero when the task
	// was built in Go.
	Pos Position
}

// InputRef wires one value of an upstream task's result into a task.
type InputRef struct {
	// From is the id of the upstream task.
	From string `json:"from"`
	// Slot is a dotted path into From's result; empty means the whole result.
	Slot string `json:"slot,omitempty"`
}

// TaskType says how the runner treats a task. The zero TaskType is not
// valid; [Parse] and [NewTask] give a task [TypeTask].
type TaskType string

// Task types.
const (
	// TypeTask runs the task's agent.
	TypeTask TaskType = "task"
	// TypeSynthesisGate compresses the results of its dependencies and is an
	// implicit checkpoint: when it fails, nothing downstream runs.
	TypeSynthesisGate TaskType = "synthesis_gate"
	// TypeHumanReview pauses the run until a person decides.
	TypeHumanReview TaskType = "human_review"
)

// Policy says what happens when a task fails (OnFailure) or its output fails
// verification (OnVerificationFailure). The zero Policy is not valid; [Parse]
// and [NewTask] fill in each policy of a task.
type Policy string

// Failure policies.
const (
	// PolicyStop halts the run if the task is critical, else logs and goes on.
	PolicyStop Policy = "stop"
	// PolicySkip logs the failure and goes on.
	PolicySkip Policy = "skip"
	// PolicyRetry retries with the diagnosis appended, up to MaxRetries times.
	PolicyRetry Policy = "retry"
	// PolicyReplan hands the failure to the meta-planner.
	PolicyReplan Policy = "replan"
)

// TaskTypes lists the valid task types in canonical order.
var TaskTypes = []TaskType{TypeTask, TypeSynthesisGate, TypeHumanReview}

// Policies lists the valid failure policies in canonical order.
var Policies = []Policy{PolicyStop, PolicySkip, PolicyRetry, PolicyReplan}

// Valid reports whether t is one of [TaskTypes].
func (t TaskType) Valid() bool {
	return t == TypeTask || t == TypeSynthesisGate || t == TypeHumanReview
}

// Valid reports whether p is one of [Policies].
func (p Policy) Valid() bool {
	return p == PolicyStop || p == PolicySkip || p == PolicyRetry || p == PolicyReplan
}

// NewTask returns a task with [Parse]'s defaults: the default agent, type task,
// on_failure stop, critical, [DefaultMaxRetries], on_verification_failure retry.
func NewTask(id, input string) Task {
	return Task{
		ID:                    id,
		Agent:                 DefaultAgent,
		Input:                 input,
		Type:                  TypeTask,
		OnFailure:             PolicyStop,
		MaxRetries:            DefaultMaxRetries,
		Critical:              true,
		OnVerificationFailure: PolicyRetry,
	}
}

// Position is a place in a parsed source: 1-based line and column, the
// column counted in characters. The zero Position means unknown.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// IsValid reports whether the position is known.
func (p Position) IsValid() bool { return p.Line > 0 }

func (p Position) String() string {
	if !p.IsValid() {
		return "-"
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Column)
}

// UnknownKey is a key [Parse] tolerated and dropped.
type UnknownKey struct {
	// TaskID is the task the key belonged to; empty for plan, phase and
	// agent keys.
	TaskID string
	// Key is the path of the key as written, e.g. "depend_on" or
	// "agents.writer.temperature".
	Key string
	Pos Position
	// Suggestion is the key of the plan format that Key most likely
	// misspells ("depends_on" for "depend_on"), or "" when none is near
	// enough, and for an alias a stronger key shadows ("name" beside "id").
	// A key with a suggestion is a near miss: what the plan's author meant
	// by it is lost, whereas other unknown keys are mostly notes.
	Suggestion string
}

// Message says what became of the key, with the suggestion if there is one.
func (u UnknownKey) Message() string {
	msg := fmt.Sprintf("key %q is not part of the plan format and was ignored", u.Key)
	if u.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", u.Suggestion)
	}
	return msg
}

// String describes the key on one line, where it is (when known) and
// whose first, as a compiler would:
//
//	3:27: task b: key "depend_on" is not part of the plan format and was ignored; did you mean "depends_on"?
func (u UnknownKey) String() string {
	owner := "plan: "
	if u.TaskID != "" {
		owner = "task " + u.TaskID + ": "
	}
	if u.Pos.IsValid() {
		owner = u.Pos.String() + ": " + owner
	}
	return owner + u.Message()
}
