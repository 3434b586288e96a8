package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// The assertions here hold for any model, the toy one included: they are
// about dagent's handling of whatever the model answers. What only a
// capable model achieves is asserted by the tests under suite.Strict.

// checkPlanning checks one Plan or Replan: the requests it sent (xs, in
// order), and its outcome. It returns whether the outcome is a plan that may
// run. maxAttempts is 1 plus the corrections allowed.
func checkPlanning(t *testing.T, reg *registry.Registry, op string, xs []exchange, res *metaplanner.Result, err error, maxAttempts int) bool {
	t.Helper()
	require.NotNil(t, res, "%s: the Result is never nil", op)
	for i, x := range xs {
		// A failed request is the wire path failing (or a prompt the model's
		// context cannot hold): nothing below means anything then.
		require.NoError(t, x.err, "%s: request %d of %d failed", op, i+1, len(xs))
	}
	require.NotEmpty(t, xs, "%s: no request reached the model", op)
	assert.Equal(t, len(xs), res.Attempts, "%s: one request per attempt", op)
	assert.LessOrEqual(t, res.Attempts, maxAttempts, "%s: at most 1 + the corrections allowed", op)

	var usage llm.Usage
	for i, x := range xs {
		usage = usage.Add(x.resp.Usage)
		assert.Greater(t, x.resp.Usage.PromptTokens, 0, "%s: request %d: the server counts prompt tokens", op, i+1)
		checkStructured(t, fmt.Sprintf("%s: answer %d", op, i+1), x.resp)
	}
	assert.Equal(t, usage, res.Usage, "%s: the Result's usage is the sum of its requests'", op)

	switch {
	case err == nil:
		switch res.Route {
		case metaplanner.RoutePlan:
			require.NotNil(t, res.Plan, "%s: route plan without a plan", op)
			rep := critic.Review(res.Plan, criticOptions(reg)...)
			assert.False(t, rep.Has(critic.Critical), "%s: an accepted plan passes the critic: %v", op, rep.Issues)
			assert.False(t, res.Report.Has(critic.Critical), "%s: an accepted plan's report has no critical issue", op)
			t.Logf("%s: accepted plan after %d attempt(s): %s", op, res.Attempts, taskList(res.Plan))
			return true
		case metaplanner.RouteSynthesis:
			assert.NotEmpty(t, strings.TrimSpace(res.Answer), "%s: a synthesis has an answer", op)
			t.Logf("%s: the model answered directly: %q", op, res.Answer)
		case metaplanner.RouteClarify:
			assert.NotEmpty(t, strings.TrimSpace(res.Question), "%s: a clarification has a question", op)
			t.Logf("%s: the model asked: %q", op, res.Question)
		default:
			t.Errorf("%s: unknown route %q", op, res.Route)
		}
		return false
	case errors.Is(err, metaplanner.ErrNoValidPlan):
		var pe *metaplanner.PlanError
		require.ErrorAs(t, err, &pe, "%s: ErrNoValidPlan comes as a *PlanError", op)
		assert.NotEmpty(t, pe.Report.Issues, "%s: the critic's report is attached", op)
		for _, is := range pe.Report.Issues {
			assert.NotEmpty(t, is.Check, "%s: every issue names its check: %+v", op, is)
			assert.NotEmpty(t, is.Message, "%s: every issue says what is wrong: %+v", op, is)
		}
		assert.True(t, pe.Report.Has(critic.Critical), "%s: a rejected answer has a critical issue", op)
		assert.Equal(t, res.Attempts, pe.Attempts, "%s: the error counts the attempts", op)
		assert.Equal(t, maxAttempts, res.Attempts, "%s: every correction was asked for before giving up", op)
		t.Logf("%s: no valid plan after %d attempt(s): %d issue(s), checks %v", op, res.Attempts, len(pe.Report.Issues), checks(pe.Report))
		return false
	default:
		require.NoError(t, err, "%s: the planner fails only with ErrNoValidPlan once the model answered", op)
		return false
	}
}

// checkStructured checks an answer to a request for structured output:
// unless it was cut off at the token limit, it is JSON, and a plan in it is
// JSON that plan.Parse reads.
func checkStructured(t *testing.T, what string, resp llm.Response) {
	t.Helper()
	content := strings.TrimSpace(resp.Message.Content)
	if resp.FinishReason == "length" {
		t.Logf("%s: cut off at the token limit after %d tokens (%d bytes)", what, resp.Usage.CompletionTokens, len(content))
		return
	}
	if !assert.True(t, json.Valid([]byte(content)), "%s: structured output is JSON: %q", what, excerpt(content)) {
		return
	}
	var env map[string]json.RawMessage
	if json.Unmarshal([]byte(content), &env) != nil {
		return
	}
	src, ok := env["plan"]
	if !ok || string(src) == "null" {
		if _, ok := env["tasks"]; !ok {
			return
		}
		src = json.RawMessage(content) // a bare plan
	}
	_, err := plan.Parse(src)
	for _, p := range plan.Problems(err) {
		assert.NotContains(t, []plan.Code{plan.CodeInvalidJSON, plan.CodeNoJSON}, p.Code, "%s: plan.Parse reads the plan: %v", what, p)
	}
}

// checkExecution checks what holds for every execution, whatever the plan
// and the model: a known status, a consistent result, and no task run again
// once it was done — seen both in the runner's events and in the calls the
// workers counted.
func checkExecution(t *testing.T, xr *executor.Result, xerr error, obs *events, wc *calls) {
	t.Helper()
	var refused *executor.RefusedError
	require.False(t, errors.As(xerr, &refused), "the executor refused a plan the critic accepted: %v", xerr)
	require.NoError(t, xerr)
	require.NotNil(t, xr)
	t.Logf("execution: status %s, %d run(s), %d replan(s), halt %q, err %v", xr.Status, xr.ExecutionAttempts, xr.ReplanCount, xr.Halt, xr.Err)

	assert.Contains(t, []runner.Status{runner.StatusCompleted, runner.StatusFailed, runner.StatusWaiting, runner.StatusReplanRequired}, xr.Status)
	assert.GreaterOrEqual(t, xr.ExecutionAttempts, 1)
	assert.Len(t, xr.History, xr.ReplanCount+max(0, xr.Rounds-1), "one history entry per replan, and per round after the first")
	assert.Contains(t, []string{"", executor.HaltMaxReplans, executor.HaltMaxReplansPerTask, executor.HaltSameFailure,
		executor.HaltConsecutiveFailures, executor.HaltBudget, executor.HaltReplanFailed, executor.HaltFlakyStreak, executor.HaltPlanGrowth,
		executor.HaltMaxRounds, executor.HaltGaveUp}, xr.Halt)
	if xr.Status == runner.StatusCompleted {
		assert.Empty(t, xr.Halt, "a completed execution did not halt")
		assert.NoError(t, xr.Err)
	}
	if xr.Status == runner.StatusFailed {
		assert.Error(t, xr.Err, "a failed execution says why")
	}
	require.NotNil(t, xr.Plan)
	for id, out := range xr.Outputs() {
		assert.Equal(t, runner.TaskDone, xr.Tasks[id].Status, "task %s has an output, so it is done", id)
		_ = out
	}

	runs := obs.runs()
	assert.Len(t, runs, xr.ExecutionAttempts, "one runner run per execution attempt")
	// The events: a task finished in a run never starts in a later one.
	done := map[string]string{} // task -> the run it finished in
	for _, run := range runs {
		for _, e := range obs.list() {
			if e.RunID == run && e.Kind == runner.EventTaskStarted {
				if in, ok := done[e.TaskID]; ok {
					t.Errorf("task %s ran again in run %s after it was done in run %s", e.TaskID, run, in)
				}
			}
		}
		for _, e := range obs.list() {
			if e.RunID == run && e.Kind == runner.EventTaskFinished {
				done[e.TaskID] = run
			}
		}
	}
	// The workers' own count: no call for a task in a run after the one it
	// was done in.
	order := map[string]int{}
	for i, run := range runs {
		order[run] = i
	}
	for _, c := range wc.list() {
		if in, ok := done[c.TaskID]; ok && order[c.RunID] > order[in] {
			t.Errorf("worker %s was called for task %s in run %s, after the task was done in run %s", c.Worker, c.TaskID, c.RunID, in)
		}
	}
}

// findNumber reports whether want occurs in v: as a number, or as a word of
// a string.
func findNumber(v any, want float64) bool {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return err == nil && f == want
	case float64:
		return v == want
	case int:
		return float64(v) == want
	case string:
		re := regexp.MustCompile(`(^|[^0-9.])` + regexp.QuoteMeta(fmt.Sprint(want)) + `($|[^0-9])`)
		return re.MatchString(v)
	case map[string]any:
		for _, x := range v {
			if findNumber(x, want) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, func(x any) bool { return findNumber(x, want) })
	}
	return false
}

// checks lists the checks of a report's issues.
func checks(rep critic.Report) []string {
	var out []string
	for _, is := range rep.Issues {
		if !slices.Contains(out, is.Check) {
			out = append(out, is.Check)
		}
	}
	return out
}

// taskList shows a plan's tasks as id(agent)<-deps.
func taskList(p *plan.Plan) string {
	var parts []string
	for _, t := range p.Tasks {
		s := t.ID + "(" + t.Agent + ")"
		if len(t.DependsOn) > 0 {
			s += "<-" + strings.Join(t.DependsOn, ",")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func excerpt(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
