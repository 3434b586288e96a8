package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// Decision is a person's verdict on a human_review task.
type Decision struct {
	Approved bool
	Comment  string
	// Output becomes the task's output when the review is approved.
	Output any
}

// Approve is an approval whose output is the word "approve".
func Approve() Decision { return Decision{Approved: true, Output: "approve"} }

// Reject is a rejection with a comment that says why.
func Reject(comment string) Decision { return Decision{Comment: comment} }

// ParseDecision reads a decision as JSON gives it: "approve" or "reject", or
// an object {"approved": bool, "comment": string, "output": any}. Approval
// makes the decision the task's output: the object's "output" when it has
// one, else the decision as given.
func ParseDecision(v any) (Decision, error) {
	switch d := v.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "approve", "approved":
			return Decision{Approved: true, Output: d}, nil
		case "reject", "rejected":
			return Decision{}, nil
		}
		return Decision{}, fmt.Errorf("decision %q is neither approve nor reject", d)
	case map[string]any:
		var dec Decision
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if k != "approved" && k != "comment" && k != "output" {
				return Decision{}, fmt.Errorf("decision has unknown key %q; use approved, comment and output", k)
			}
		}
		approved, ok := d["approved"].(bool)
		if !ok {
			return Decision{}, fmt.Errorf("decision needs \"approved\": true or false")
		}
		dec.Approved = approved
		if c, present := d["comment"]; present {
			s, ok := c.(string)
			if !ok {
				return Decision{}, fmt.Errorf("decision comment must be a string")
			}
			dec.Comment = s
		}
		dec.Output = v
		if out, present := d["output"]; present {
			dec.Output = out
		}
		return dec, nil
	}
	b, _ := json.Marshal(v)
	return Decision{}, fmt.Errorf("decision %s is neither \"approve\", \"reject\" nor an object", b)
}

// ParseDecisions reads the decisions of a run's human reviews from data,
// a JSON object of task id to a decision as [ParseDecision] reads it, for
// [WithReviews]:
//
//	{"review": "approve", "legal": {"approved": false, "comment": "too long"}}
//
// Numbers keep their exact text, as [json.Number]. An error names the
// first task, in the order of the ids, whose decision is bad.
func ParseDecisions(data []byte) (map[string]Decision, error) {
	v, err := jsonv.DecodeBytes(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("want an object of task id to decision")
	}
	decisions := make(map[string]Decision, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		d, err := ParseDecision(m[id])
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", id, err)
		}
		decisions[id] = d
	}
	return decisions, nil
}
