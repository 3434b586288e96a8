package metaplanner_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
)

// outcomes has an outcome of every route, and one of a planning that
// found no valid plan.
func outcomes(t *testing.T) map[string]metaplanner.Outcome {
	t.Helper()
	p, err := plan.Parse([]byte(`{"mission": "Greet <them> & go", "tasks": [{"id": "greet", "input": "Say <b>hello</b>"}]}`))
	require.NoError(t, err)
	warning := critic.Issue{Check: "missing_verification", Severity: critic.Warning, TaskID: "greet", Field: "verification",
		Message: "task greet has no verification", Recommendation: "Add a predicate."}
	critical := critic.Issue{Check: "unknown_agent", Severity: critic.Critical, TaskID: "greet", Field: "agent",
		Message: `agent "nope" is not defined`, Recommendation: "Name a worker."}
	usage := llm.Usage{PromptTokens: 1500, CompletionTokens: 120}
	return map[string]metaplanner.Outcome{
		"plan": {Result: &metaplanner.Result{Route: metaplanner.RoutePlan, Plan: p, Reason: "one task does it", Attempts: 1, Usage: usage,
			Report: critic.Report{Score: 9, Summary: "Good.", Issues: []critic.Issue{warning}}, Raw: "{...}", Refreshes: 1}},
		"synthesis": {Result: &metaplanner.Result{Route: metaplanner.RouteSynthesis, Answer: "Bonjour <means> hello & more.", Attempts: 1, Usage: usage}},
		"clarify":   {Result: &metaplanner.Result{Route: metaplanner.RouteClarify, Question: "Which one?", Reason: "two repositories", Attempts: 1, Usage: usage}},
		"no-valid-plan": {
			Result: &metaplanner.Result{Route: metaplanner.RoutePlan, Plan: p, Attempts: 3, Usage: usage,
				Report: critic.Report{Score: 7, Summary: "Bad.", Issues: []critic.Issue{critical}}},
			Err: &metaplanner.PlanError{Report: critic.Report{Issues: []critic.Issue{critical}}, Attempts: 3},
		},
	}
}

func TestOutcomeJSONGolden(t *testing.T) {
	for name, o := range outcomes(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, jsonv.EncodeIndent(&b, o, "  "))
			golden.Check(t, filepath.Join("testdata", "outcome-"+name+".golden.json"), b.Bytes())
		})
	}
}

func TestOutcomeJSONRoundTrip(t *testing.T) {
	for name, o := range outcomes(t) {
		t.Run(name, func(t *testing.T) {
			first, err := json.Marshal(o)
			require.NoError(t, err)
			var back metaplanner.Outcome
			require.NoError(t, json.Unmarshal(first, &back))
			second, err := json.Marshal(back)
			require.NoError(t, err)
			assert.JSONEq(t, string(first), string(second))

			res := back.Result
			require.NotNil(t, res)
			assert.Equal(t, o.Result.Route, res.Route)
			assert.Equal(t, o.Result.Attempts, res.Attempts)
			assert.Equal(t, o.Result.Usage, res.Usage)
			if len(o.Result.Report.Issues) == 0 {
				assert.Empty(t, res.Report.Issues)
			} else {
				assert.Equal(t, o.Result.Report.Issues, res.Report.Issues)
			}
			assert.Empty(t, res.Raw, "Raw is not written")
			if o.Err != nil {
				assert.EqualError(t, back.Err, o.Err.Error())
				assert.NotErrorIs(t, back.Err, metaplanner.ErrNoValidPlan, "an error comes back as its text only")
				assert.Nil(t, res.Plan, "a plan that was not accepted is not written")
				return
			}
			assert.NoError(t, back.Err)
			assert.Equal(t, o.Result.Answer, res.Answer)
			assert.Equal(t, o.Result.Question, res.Question)
			if o.Result.Plan != nil {
				require.NotNil(t, res.Plan)
				want, err := o.Result.Plan.Canonical()
				require.NoError(t, err)
				got, err := res.Plan.Canonical()
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got))
			}
		})
	}
}

func TestOutcomeJSONEmpty(t *testing.T) {
	for _, o := range []metaplanner.Outcome{{}, {Result: &metaplanner.Result{}}} {
		b, err := json.Marshal(o)
		require.NoError(t, err)
		assert.JSONEq(t, `{"version": 1, "route": "", "plan": null, "answer": null, "question": null, "reason": "",
			"report": {"score": 0, "summary": "", "issues": []}, "attempts": 0,
			"usage": {"prompt_tokens": 0, "completion_tokens": 0}}`, string(b))
	}
}

func TestOutcomeUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		err  string
		is   error
	}{
		{name: "without a version", doc: `{"route": "synthesis", "answer": "Hi."}`},
		{name: "newer version", doc: `{"version": 2, "route": "plan"}`, err: "unsupported planning outcome version 2: this reads versions up to 1", is: metaplanner.ErrOutcomeVersion},
		{name: "version zero", doc: `{"version": 0, "route": "plan"}`, err: "unsupported planning outcome version 0", is: metaplanner.ErrOutcomeVersion},
		{name: "a version that is no number", doc: `{"version": "one", "route": "plan"}`, err: "planning outcome: "},
		{name: "an invalid plan", doc: `{"version": 1, "route": "plan", "plan": {"tasks": [{"id": "a", "timeout": 30}]}}`, err: "planning outcome: "},
		{name: "not an object", doc: `[]`, err: "planning outcome: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got metaplanner.Outcome
			err := json.Unmarshal([]byte(tc.doc), &got)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, "Hi.", got.Result.Answer)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// A planning outcome is what a host prints or sends of a planning: here,
// the planner's direct answer to a mission that needed no plan.
func ExampleOutcome() {
	res := &metaplanner.Result{Route: metaplanner.RouteSynthesis, Answer: "Bonjour means hello.", Attempts: 1,
		Usage: llm.Usage{PromptTokens: 900, CompletionTokens: 12}}
	b, err := json.Marshal(metaplanner.Outcome{Result: res})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))

	var back metaplanner.Outcome
	if err := json.Unmarshal(b, &back); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Result.Route, back.Result.Answer, back.Err)
	// Output:
	// {"version":1,"route":"synthesis","plan":null,"answer":"Bonjour means hello.","question":null,"reason":"","report":{"score":0,"summary":"","issues":[]},"attempts":1,"usage":{"prompt_tokens":900,"completion_tokens":12}}
	// synthesis Bonjour means hello. <nil>
}

// FuzzOutcome checks that whatever UnmarshalJSON reads, MarshalJSON
// writes in a form that reads back to the same document. The seed corpus
// is testdata/fuzz/FuzzOutcome.
func FuzzOutcome(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var o metaplanner.Outcome
		if json.Unmarshal(data, &o) != nil {
			return
		}
		out, err := json.Marshal(o)
		require.NoError(t, err)
		var back metaplanner.Outcome
		require.NoError(t, json.Unmarshal(out, &back), "the written form must read back:\n%s", out)
		again, err := json.Marshal(back)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}
