package judge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
)

func reviewPlan() *plan.Plan {
	fetch := plan.NewTask("fetch", "Find three reviews of the product.")
	sum := plan.NewTask("summary", "Summarise the reviews.")
	sum.DependsOn = []string{"fetch"}
	return &plan.Plan{Mission: "Brief the team on the product's reviews", Tasks: []plan.Task{fetch, sum}}
}

// The reviewer's findings are merged into the static report: at most
// warnings, about tasks the plan has, with the check llm_review.
func TestReviewerMerged(t *testing.T) {
	s := startServer(t, `{"issues": [
		{"severity": "warning", "task_id": "summary", "field": "verification", "message": "nothing checks the summary", "recommendation": "add a predicate"},
		{"severity": "critical", "task_id": "ghost", "field": "", "message": "a task the plan lacks", "recommendation": ""},
		{"severity": "info", "task_id": "", "field": "", "message": "", "recommendation": "dropped: no message"}
	]}`)
	meter := llm.NewMeter(s.client(t), llm.Budget{})
	p := reviewPlan()
	static := critic.Review(p)
	rep, err := critic.ReviewWith(t.Context(), p, judge.NewReviewer(meter))
	require.NoError(t, err)
	assert.Equal(t, 1, meter.Calls(), "metered")

	var llmIssues []critic.Issue
	for _, is := range rep.Issues {
		if is.Check == judge.ReviewCheck {
			llmIssues = append(llmIssues, is)
		}
	}
	assert.Len(t, rep.Issues, len(static.Issues)+2, "the static findings are kept")
	require.Len(t, llmIssues, 2)
	assert.Equal(t, critic.Info, llmIssues[0].Severity, "a model's finding is never critical, and one about no task is the plan's")
	assert.Empty(t, llmIssues[0].TaskID)
	got := llmIssues[1]
	assert.Equal(t, []string{judge.ReviewCheck, string(critic.Warning), "summary", "verification", "nothing checks the summary", "add a predicate"},
		[]string{got.Check, string(got.Severity), got.TaskID, got.Field, got.Message, got.Recommendation})
	assert.Contains(t, rep.Recommendations, "add a predicate")

	body := s.requests()[0]
	format, _ := body["response_format"].(map[string]any)
	schema, _ := format["json_schema"].(map[string]any)
	assert.Equal(t, judge.ReviewSchemaName, schema["name"])
	_, contents := messages(body)
	assert.Contains(t, contents[1], `<data source="plan">`)
	assert.Contains(t, contents[1], `<data source="static_review">`)
}

func TestReviewerErrors(t *testing.T) {
	tests := []struct {
		name    string
		answers []string
		budget  llm.Budget
		target  error
	}{
		{"not a review", []string{`{"findings": []}`}, llm.Budget{}, judge.ErrInvalidAnswer},
		{"an empty review", []string{`{"issues": []}`}, llm.Budget{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.answers...)
			meter := llm.NewMeter(s.client(t), tt.budget)
			p := reviewPlan()
			rep, err := critic.ReviewWith(t.Context(), p, judge.NewReviewer(meter))
			if tt.target == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, critic.ErrReviewer)
			require.ErrorIs(t, err, tt.target)
			assert.Equal(t, critic.Review(p).Issues, rep.Issues, "the static findings stand")
		})
	}
}

func TestReviewerBudget(t *testing.T) {
	s := startServer(t, `{"issues": []}`)
	meter := llm.NewMeter(s.client(t), llm.Budget{MaxCalls: 1})
	rv := judge.NewReviewer(meter)
	_, err := critic.ReviewWith(t.Context(), reviewPlan(), rv)
	require.NoError(t, err)
	_, err = critic.ReviewWith(t.Context(), reviewPlan(), rv)
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)
	assert.Len(t, s.requests(), 1)
}
