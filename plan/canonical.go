package plan

import (
	"bytes"
	"encoding/json"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// taskJSON is the canonical JSON of a task: fields in a fixed order, the
// defaults written out, empty optional fields left out.
type taskJSON struct {
	ID                    string              `json:"id"`
	Agent                 string              `json:"agent"`
	Input                 string              `json:"input"`
	DependsOn             []string            `json:"depends_on"`
	When                  string              `json:"when,omitempty"`
	Type                  TaskType            `json:"type"`
	OnFailure             Policy              `json:"on_failure"`
	MaxRetries            int                 `json:"max_retries"`
	Critical              bool                `json:"critical"`
	Timeout               string              `json:"timeout,omitempty"`
	Verification          string              `json:"verification,omitempty"`
	OnVerificationFailure Policy              `json:"on_verification_failure"`
	Inputs                map[string]InputRef `json:"inputs,omitempty"`
	Params                map[string]any      `json:"params,omitempty"`
	OutputSchema          json.RawMessage     `json:"output_schema,omitempty"`
	Priority              int                 `json:"priority,omitempty"`
	Rubric                string              `json:"rubric,omitempty"`
}

// canonical is the task's canonical JSON, to encode.
func (t *Task) canonical() taskJSON {
	j := taskJSON{
		ID: t.ID, Agent: t.Agent, Input: t.Input, DependsOn: t.DependsOn, When: t.When,
		Type: t.Type, OnFailure: t.OnFailure, MaxRetries: t.MaxRetries, Critical: t.Critical,
		Verification: t.Verification, OnVerificationFailure: t.OnVerificationFailure,
		Inputs: t.Inputs, Params: t.Params, OutputSchema: t.OutputSchema, Rubric: t.Rubric,
		Priority: t.Priority,
	}
	if j.DependsOn == nil {
		j.DependsOn = []string{}
	}
	if t.Timeout != 0 {
		j.Timeout = t.Timeout.String()
	}
	return j
}

// MarshalJSON writes the task's canonical JSON.
func (t Task) MarshalJSON() ([]byte, error) {
	return marshal(t.canonical(), "")
}

// planJSON is the canonical JSON of a plan. Its tasks are encoded in the
// same pass as the plan, rather than each by its MarshalJSON, whose output
// encoding/json would scan again: a large plan is encoded once.
type planJSON struct {
	Mission string           `json:"mission,omitempty"`
	Agents  map[string]Agent `json:"agents,omitempty"`
	Tasks   []taskJSON       `json:"tasks"`
}

func (p *Plan) canonical() planJSON {
	tasks := make([]taskJSON, len(p.Tasks))
	for i := range p.Tasks {
		tasks[i] = p.Tasks[i].canonical()
	}
	return planJSON{Mission: p.Mission, Agents: p.Agents, Tasks: tasks}
}

// MarshalJSON writes the plan's canonical JSON; see Canonical.
func (p Plan) MarshalJSON() ([]byte, error) {
	return marshal(p.canonical(), "")
}

// Canonical returns the plan's canonical JSON, indented, with a final
// newline: what `dagent fmt` prints. [Parse] reads it back to the same plan.
func (p *Plan) Canonical() ([]byte, error) {
	return marshal(p.canonical(), "  ")
}

// marshal encodes v without escaping <, > and & — predicates compare with
// them — and without encoding/json's trailing newline unless indented.
func marshal(v any, indent string) ([]byte, error) {
	if indent == "" {
		return jsonv.Marshal(v)
	}
	var b bytes.Buffer
	if err := jsonv.EncodeIndent(&b, v, indent); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
