package metaplanner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/schema"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// echo answers every task with its id and input.
func echo() agent.Agent {
	return agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: map[string]any{"id": req.TaskID, "answer": req.TaskID + " done"}}, nil
	})
}

func executeRounds(t *testing.T, maxRounds int, s *script) *executor.Result {
	t.Helper()
	mp := metaplanner.New(s.client(), metaplanner.WithMaxCorrections(1))
	res, err := executor.ExecuteRounds(context.Background(), "Find the capital of the largest country, then its population",
		executor.WithRounds(maxRounds, mp), executor.WithRunner(runner.WithAgent(plan.DefaultAgent, echo())))
	require.NoError(t, err)
	return res
}

func TestRoundsThroughTheModel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		replies   []reply
		maxRounds int
		status    runner.Status
		halt      string
		rounds    int
		check     func(t *testing.T, res *executor.Result, s *script)
	}{
		{
			name: "continue continue done",
			replies: []reply{
				text(`{"action": "continue", "tasks": [{"id": "largest", "input": "Which country is the largest?"}], "reason": "first find the country"}`),
				text("```json\n" + `{"action": "continue", "tasks": [{"id": "capital", "input": "Its capital", "inputs": {"country": {"from": "largest", "slot": "answer"}}}]}` + "\n```"),
				text(`{"action": "continue", "tasks": [{"id": "population", "input": "Population of {{results.capital.answer}}", "depends_on": ["capital"]}]}`),
				text(`{"action": "done", "deliverable": ["capital", "population"], "reason": "both known"}`),
			},
			maxRounds: 3, status: runner.StatusCompleted, rounds: 3,
			check: func(t *testing.T, res *executor.Result, s *script) {
				assert.Equal(t, []string{"capital", "population"}, res.Deliverable)
				assert.Equal(t, []string{"largest"}, res.Plan.Tasks[1].DependsOn, "a wire depends on its source")
				reqs := s.requests()
				require.Len(t, reqs, 4)
				assert.Equal(t, metaplanner.RoundSchemaName, reqs[0].Schema.Name)
				last := reqs[3].Messages[1].Content
				assert.Contains(t, last, "round 4 of at most 3")
				assert.Contains(t, last, "round budget of 3 is spent")
				assert.Contains(t, last, `<data source="results.population"`)
			},
		},
		{
			name: "failed",
			replies: []reply{
				text(`{"action": "continue", "tasks": [{"id": "largest", "input": "Which country is the largest?"}]}`),
				text(`{"action": "failed", "reason": "the sources disagree"}`),
			},
			status: runner.StatusFailed, halt: executor.HaltGaveUp, rounds: 1,
			check: func(t *testing.T, res *executor.Result, _ *script) {
				assert.ErrorContains(t, res.Err, "the planner gave up: the sources disagree")
			},
		},
		{
			name: "round budget spent",
			replies: []reply{
				text(`{"action": "continue", "tasks": [{"id": "a", "input": "A"}]}`),
				text(`{"action": "continue", "tasks": [{"id": "b", "input": "B"}]}`),
			},
			maxRounds: 1, status: runner.StatusFailed, halt: executor.HaltMaxRounds, rounds: 1,
		},
		{
			name: "an unknown task in inputs is corrected",
			replies: []reply{
				text(`{"action": "continue", "tasks": [{"id": "largest", "input": "Which country is the largest?"}]}`),
				text(`{"action": "continue", "tasks": [{"id": "capital", "input": "Its capital", "inputs": {"country": {"from": "biggest", "slot": "answer"}}}]}`),
				text(`{"action": "continue", "tasks": [{"id": "capital", "input": "Its capital", "inputs": {"country": {"from": "largest", "slot": "answer"}}}]}`),
				text(`{"action": "done", "deliverable": ["capital"]}`),
			},
			status: runner.StatusCompleted, rounds: 2,
			check: func(t *testing.T, _ *executor.Result, s *script) {
				fb := s.requests()[2].Messages[3].Content
				assert.Contains(t, fb, `task "capital"`)
				assert.Contains(t, fb, "biggest")
			},
		},
		{
			name: "an unknown task in inputs is refused",
			replies: []reply{
				text(`{"action": "continue", "tasks": [{"id": "largest", "input": "Which country is the largest?"}]}`),
				text(`{"action": "continue", "tasks": [{"id": "capital", "inputs": {"country": {"from": "biggest"}}}]}`),
				text(`{"action": "continue", "tasks": [{"id": "capital", "inputs": {"country": {"from": "biggest"}}}]}`),
			},
			status: runner.StatusFailed, halt: executor.HaltReplanFailed, rounds: 1,
			check: func(t *testing.T, res *executor.Result, _ *script) {
				assert.ErrorIs(t, res.Err, metaplanner.ErrNoValidPlan)
			},
		},
		{
			name: "a deliverable that is not completed is corrected",
			replies: []reply{
				text(`{"action": "continue", "tasks": [{"id": "largest", "input": "Which country is the largest?"}]}`),
				text(`{"action": "done", "deliverable": ["capital"]}`),
				text(`{"action": "done", "deliverable": "largest"}`),
			},
			status: runner.StatusCompleted, rounds: 1,
			check: func(t *testing.T, res *executor.Result, s *script) {
				assert.Equal(t, []string{"largest"}, res.Deliverable)
				assert.Contains(t, s.requests()[2].Messages[3].Content, metaplanner.CheckBadDeliverable)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(tc.replies...)
			res := executeRounds(t, tc.maxRounds, s)
			assert.Equal(t, tc.status, res.Status, "%v", res.Err)
			assert.Equal(t, tc.halt, res.Halt)
			assert.Equal(t, tc.rounds, res.Rounds)
			if tc.check != nil {
				tc.check(t, res, s)
			}
		})
	}
}

func TestRoundAnswerForms(t *testing.T) {
	state := executor.RoundState{Round: 2, MaxRounds: 3, Completed: map[string]any{"a": "x"},
		Plan: &plan.Plan{Mission: "m", Tasks: []plan.Task{plan.NewTask("a", "do a")}}}
	for _, tc := range []struct {
		answer string
		check  string
	}{
		{`{"action": "maybe"}`, metaplanner.CheckInvalidAction},
		{`{"action": "continue"}`, metaplanner.CheckNoNewTasks},
		{`{"action": "continue", "tasks": []}`, metaplanner.CheckNoNewTasks},
		{`{"action": "failed"}`, metaplanner.CheckMissingReason},
		{`{"action": "done"}`, metaplanner.CheckBadDeliverable},
		{`{"action": "continue", "tasks": [{"id": "a", "input": "again"}]}`, string(plan.CodeDuplicateID)},
		{`no json at all`, string(plan.CodeInvalidJSON)},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			mp := metaplanner.New(newScript(text(tc.answer)).client(), metaplanner.WithMaxCorrections(0))
			a, err := mp.Round(context.Background(), "m", state)
			require.ErrorIs(t, err, metaplanner.ErrNoValidPlan)
			var pe *metaplanner.PlanError
			require.ErrorAs(t, err, &pe)
			var checks []string
			for _, is := range pe.Report.Issues {
				checks = append(checks, is.Check)
			}
			assert.Contains(t, checks, tc.check)
			assert.Equal(t, 110, a.Usage.Total())
		})
	}
}

func TestRoundSchema(t *testing.T) {
	s := string(metaplanner.RoundSchema())
	for _, want := range []string{`"continue"`, `"done"`, `"failed"`, `"deliverable"`, `"#/$defs/Task"`} {
		assert.True(t, strings.Contains(s, want), want)
	}
	assert.NotContains(t, s, `"rubric"`, "the host's to set")
	assert.NotContains(t, s, `"priority"`, "the host's to set")
}

// The brief schema names only what the round can use: the agents that
// exist, the completed tasks, new tasks numbered after the plan's, and the
// actions that can be acted on.
func TestBriefRoundSchema(t *testing.T) {
	s := newScript(text(`{"action": "continue", "tasks": [{"id": "t1", "agent": "scraper", "input": "https://example.com", "depends_on": []}]}`),
		text(`{"action": "failed", "reason": "the site is down"}`),
		text(`{"action": "done", "deliverable": ["t1"]}`))
	mp := metaplanner.New(s.client(), metaplanner.WithBrief(), metaplanner.WithRegistry(hostRegistry(t)))
	_, err := mp.Round(context.Background(), "m", executor.RoundState{Round: 1, MaxRounds: 2})
	require.NoError(t, err)
	ran := &plan.Plan{Tasks: []plan.Task{plan.NewTask("t1", "scrape")}}
	_, err = mp.Round(context.Background(), "m", executor.RoundState{Round: 2, MaxRounds: 2, Plan: ran,
		Failed: []executor.Failure{{TaskID: "t1", Class: "agent_error", Diagnosis: "503"}}})
	require.NoError(t, err)
	state := executor.RoundState{Round: 3, MaxRounds: 2, Completed: map[string]any{"t1": "x"},
		Plan: ran, Failed: []executor.Failure{{TaskID: "b", Class: "timeout", Diagnosis: strings.Repeat("slow ", 200), Suggestion: "raise the timeout"}}}
	a, err := mp.Round(context.Background(), "m", state)
	require.NoError(t, err)
	assert.Equal(t, []string{"t1"}, a.Deliverable)
	reqs := s.requests()
	valid := func(k int, answer string) bool {
		t.Helper()
		sch, err := schema.Compile(reqs[k].Schema.Schema)
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal([]byte(answer), &v))
		return sch.Validate(v) == nil
	}
	task := func(id, agent string, deps string) string {
		return `{"id": "` + id + `", "agent": "` + agent + `", "input": "x", "depends_on": ` + deps + `}`
	}
	// The first round plans, on the agents that exist, tasks numbered from t1.
	assert.True(t, valid(0, `{"action": "continue", "tasks": [`+task("t1", "scraper", "[]")+`, `+task("t2", "default", `["t1"]`)+`]}`))
	assert.False(t, valid(0, `{"action": "continue"}`), "a continue names its tasks")
	assert.False(t, valid(0, `{"action": "failed", "reason": "x"}`), "the first round plans")
	assert.False(t, valid(0, `{"action": "continue", "tasks": [`+task("t1", "crawler", "[]")+`]}`), "an invented worker")
	assert.False(t, valid(0, `{"action": "continue", "tasks": [`+task("fetch", "scraper", "[]")+`]}`), "a named id")
	// Nothing completed yet: continue with tasks numbered after the plan's, or fail with a reason.
	assert.True(t, valid(1, `{"action": "continue", "tasks": [`+task("t2", "scraper", "[]")+`]}`))
	assert.False(t, valid(1, `{"action": "continue", "tasks": [`+task("t1", "scraper", "[]")+`]}`), "t1 is the plan's")
	assert.True(t, valid(1, `{"action": "failed", "reason": "the site is down"}`))
	assert.False(t, valid(1, `{"action": "failed"}`), "a failed says why")
	assert.False(t, valid(1, `{"action": "done", "deliverable": ["t1"]}`), "nothing to deliver")
	// The budget is spent: deliver completed tasks, or fail.
	assert.True(t, valid(2, `{"action": "done", "deliverable": ["t1"]}`))
	assert.False(t, valid(2, `{"action": "done"}`), "a done names its deliverable")
	assert.False(t, valid(2, `{"action": "done", "deliverable": ["b"]}`), "b is not completed")
	assert.False(t, valid(2, `{"action": "continue", "tasks": [`+task("t2", "scraper", `["t1"]`)+`]}`), "no round is left")
	prompt := reqs[2].Messages[1].Content
	assert.Contains(t, prompt, "Failed: b (timeout).")
	assert.Contains(t, prompt, "<data source=\"suggestion.b\">\nraise the timeout\n</data>", "the worker's suggestion, as data")
	assert.NotContains(t, prompt, "current_plan", "a brief prompt leaves the plan out")
	assert.Less(t, len(prompt), 1000, "the results so far share a small budget")
}

// With a registry, the round schema is held to the catalog as a plan's is:
// a round's new tasks name "default", the registry's workers or agents
// earlier rounds defined; the agents it defines name the registry's tools.
func TestCatalogRoundSchema(t *testing.T) {
	s := newScript(text(`{"action": "done", "deliverable": ["a"]}`))
	mp := metaplanner.New(s.client(), metaplanner.WithRegistry(hostRegistry(t)))
	earlier := &plan.Plan{Agents: map[string]plan.Agent{"writer": {Prompt: "You write."}}, Tasks: []plan.Task{plan.NewTask("a", "scrape")}}
	_, err := mp.Round(context.Background(), "m", executor.RoundState{Round: 2, MaxRounds: 3, Plan: earlier, Completed: map[string]any{"a": "x"}})
	require.NoError(t, err)
	sch, err := schema.Compile(s.requests()[0].Schema.Schema)
	require.NoError(t, err, "the schema sent compiles")
	for _, tt := range []struct {
		name, answer string
		ok           bool
	}{
		{"a worker", `{"action": "continue", "tasks": [{"id": "b", "agent": "scraper", "depends_on": ["a"]}]}`, true},
		{"an earlier round's agent", `{"action": "continue", "tasks": [{"id": "b", "agent": "writer"}]}`, true},
		{"an invented worker", `{"action": "continue", "tasks": [{"id": "b", "agent": "crawler"}]}`, false},
		{"a new agent with a registry tool", `{"action": "continue", "agents": {"s": {"prompt": "p", "tools": ["web_search"]}}, "tasks": [{"id": "b", "agent": "s"}]}`, true},
		{"a new agent with an invented tool", `{"action": "continue", "agents": {"s": {"prompt": "p", "tools": ["rm_rf"]}}, "tasks": [{"id": "b", "agent": "s"}]}`, false},
		{"done", `{"action": "done", "deliverable": ["a"], "reason": "a answers it"}`, true},
		{"failed", `{"action": "failed", "reason": "no source"}`, true},
		{"an unknown action", `{"action": "pause"}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			require.NoError(t, json.Unmarshal([]byte(tt.answer), &v))
			if err := sch.Validate(v); tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// The first round is planned with what the host gave the planner: its
// context and its memory of earlier runs, as data.
func TestRoundPlansWithContextAndMemory(t *testing.T) {
	s := newScript(text(`{"action": "continue", "tasks": [{"id": "a", "input": "x"}]}`))
	mem := &metaplanner.Memory{Runs: 2, Agents: []metaplanner.Fared{{Name: "scraper", Done: 1, Failed: 1}}}
	mp := metaplanner.New(s.client(), metaplanner.WithMemory(mem),
		metaplanner.WithContext(metaplanner.Context{Text: "the user reads French", Provenance: "profile"}))
	_, err := mp.Round(context.Background(), "m", executor.RoundState{Round: 1, MaxRounds: 2})
	require.NoError(t, err)
	prompt := s.requests()[0].Messages[1].Content
	assert.Contains(t, prompt, "<data source=\"memory\">")
	assert.Contains(t, prompt, "scraper")
	assert.Contains(t, prompt, "<data source=\"context\" provenance=\"profile\">\nthe user reads French\n</data>")
}
