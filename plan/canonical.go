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
}

// MarshalJSON writes the task's canonical JSON.
func (t Task) MarshalJSON() ([]byte, error) {
	j := taskJSON{
		ID: t.ID, Agent: t.Agent, Input: t.Input, DependsOn: t.DependsOn,
		Type: t.Type, OnFailure: t.OnFailure, MaxRetries: t.MaxRetries, Critical: t.Critical,
		Verification: t.Verification, OnVerificationFailure: t.OnVerificationFailure,
		Inputs: t.Inputs, Params: t.Params, OutputSchema: t.OutputSchema,
	}
	if j.DependsOn == nil {
		j.DependsOn = []string{}
	}
	if t.Timeout != 0 {
		j.Timeout = t.Timeout.String()
	}
	return marshal(j, "")
}

// MarshalJSON writes the plan's canonical JSON; see Canonical.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plan Plan // without methods, so that this does not recurse
	if p.Tasks == nil {
		p.Tasks = []Task{}
	}
	return marshal(plan(p), "")
}

// Canonical returns the plan's canonical JSON, indented, with a final
// newline: what `dagent fmt` prints. [Parse] reads it back to the same plan.
func (p *Plan) Canonical() ([]byte, error) {
	return marshal(p, "  ")
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
