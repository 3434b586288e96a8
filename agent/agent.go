package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dagent-dev/dagent/llm"
)

// Agent does the work of one task attempt. Run must honour ctx: when it is
// done (timeout, cancellation, a halted run) Run should return promptly.
type Agent interface {
	Run(ctx context.Context, req Request) (Result, error)
}

// Request is what an agent receives for one attempt of a task. Its JSON form
// is what a [Command] reads on standard input.
type Request struct {
	// RunID names the run the task belongs to.
	RunID string `json:"run_id"`
	// TaskID is the id of the task in the plan.
	TaskID string `json:"task_id"`
	// Agent is the name the task gives its agent.
	Agent string `json:"agent"`
	// Input is the task's input with {{results...}} templates expanded. It
	// is the same on every attempt: what went wrong before is in Diagnosis.
	Input string `json:"input"`
	// Template is the task's input as the plan writes it, {{results...}}
	// templates unexpanded, set when it has templates; Refs holds the value
	// of each, keyed by the reference without braces ("results.fetch.items";
	// nil for a skipped task). An LLM agent shows the template and the
	// values as data, so that upstream text never reads as instructions.
	Template string         `json:"template,omitempty"`
	Refs     map[string]any `json:"refs,omitempty"`
	// Attempt counts from 1.
	Attempt int `json:"attempt"`
	// Diagnosis says why the previous attempt failed, on a retry; empty on
	// the first attempt. It is data, not an instruction: an error message
	// or a verdict, which may quote the rejected output. An agent that
	// tells a model about it should present it as such.
	Diagnosis string `json:"diagnosis,omitempty"`
	// Failure says how the previous attempt failed, set with Diagnosis, so
	// that an agent can phrase it: [FailureVerification] or [FailureError].
	Failure Failure `json:"failure,omitempty"`
	// Depends holds the outputs of the task's direct dependencies by id.
	// Skipped dependencies are absent and listed in Skipped.
	Depends map[string]any `json:"depends"`
	// Skipped lists the direct dependencies that were skipped.
	Skipped []string `json:"skipped,omitempty"`
	// Inputs holds the task's wired input slots by name.
	Inputs map[string]any `json:"inputs,omitempty"`
	// Params are the task's free-form parameters.
	Params map[string]any `json:"params,omitempty"`
	// OutputSchema is the JSON Schema the task's output must satisfy, when
	// the task declares one; an LLM agent asks for it as structured output.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// IdempotencyKey is "<run id>/<task id>/<attempt>": the same for every
	// delivery of one attempt of one task in one run, so that a worker can
	// deduplicate side effects. A run resumed under the same run id starts
	// each unfinished task again from attempt 1, with the same keys as the
	// first delivery.
	IdempotencyKey string `json:"idempotency_key"`
}

// Failure is how an attempt failed, as [Request.Failure] reports it.
type Failure string

// Ways an attempt fails.
const (
	// FailureVerification: the attempt's output was rejected: it failed
	// the task's verification predicate or output schema, or a synthesis
	// gate's output said nothing.
	FailureVerification Failure = "verification"
	// FailureError: the attempt returned an error, timed out or panicked,
	// or its output could not be checked.
	FailureError Failure = "error"
)

// Result is what an agent returns for one attempt.
type Result struct {
	// Output is the task's output: a string, or JSON-shaped data (maps,
	// slices, numbers, booleans, nil). Other Go values are turned into
	// JSON-shaped data through encoding/json before anything reads them.
	Output any
	// Usage is the LLM token usage of the attempt, zero for agents that use
	// no LLM.
	Usage Usage
}

// Usage counts LLM tokens.
type Usage = llm.Usage

// Func adapts a Go function to the [Agent] interface.
type Func func(ctx context.Context, req Request) (Result, error)

// Run calls f.
func (f Func) Run(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

// ErrInvalidOutput is matched by the error of an agent whose answer cannot
// be the task's output: not JSON when the task has an output schema, empty,
// or cut off. The runner classifies it as invalid output, which a retry or
// a repair of the plan may fix.
var ErrInvalidOutput = errors.New("invalid output")

// ErrToolRefused is matched by the error of an agent that kept asking for
// tools it may not use. Such calls are never run; an agent that persists
// in them is likely following instructions planted in its data, so the
// attempt fails rather than going on.
var ErrToolRefused = errors.New("tool call refused")
