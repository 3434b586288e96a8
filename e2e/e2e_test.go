package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// TestStructuredOutput sends one request for structured output — a small
// plan schema — and reads the answer as a plan: the wire path, usage
// accounting and plan.Parse on what a real server returns.
func TestStructuredOutput(t *testing.T) {
	e := newEnv(t)
	reg, _, err := newRegistry(registryOptions{})
	require.NoError(t, err)
	schema := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["tasks"],"properties":{"tasks":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["id","depends_on","agent","input"],"properties":{"id":{"type":"string"},"depends_on":{"type":"array","items":{"type":"string"}},"agent":{"type":"string"},"input":{"type":"string"}}}}}}`)
	resp, err := e.client.Complete(e.ctx, llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You write plans as JSON. Each task has an id, the ids it depends_on, an agent (a worker: read_file or count_words) and an input."},
			{Role: llm.RoleUser, Content: "Plan: read the file poem.txt, then count its words."},
		},
		Schema:    &llm.Schema{Name: "plan", Schema: schema, Strict: true},
		MaxTokens: 400,
	})
	require.NoError(t, err)
	assert.Equal(t, 1, e.meter.Calls())
	assert.Greater(t, resp.Usage.PromptTokens, 0, "the server counts prompt tokens")
	assert.Greater(t, resp.Usage.CompletionTokens, 0, "the server counts completion tokens")
	assert.Equal(t, resp.Usage, e.meter.Usage(), "the meter counts what the server reported")
	assert.LessOrEqual(t, resp.Usage.CompletionTokens, 400, "max_tokens bounds the answer")
	t.Logf("answer (%s, %+v): %s", resp.FinishReason, resp.Usage, resp.Message.Content)
	checkStructured(t, "answer", resp)
	if resp.FinishReason == "length" {
		require.False(t, suite.Strict, "a capable model writes this plan in 400 tokens")
		return
	}

	p, perr := plan.Parse([]byte(resp.Message.Content))
	require.NotNil(t, p, "plan.Parse reads the structured output: %v", perr)
	rep := critic.Review(p, criticOptions(reg)...)
	for _, is := range rep.Issues {
		assert.NotEmpty(t, is.Check, "every issue names its check")
	}
	t.Logf("plan: %s; critic: score %d, checks %v", taskList(p), rep.Score, checks(rep))
	if suite.Strict {
		require.NoError(t, perr)
		require.NotEmpty(t, p.Tasks)
		require.NoError(t, p.Validate(plan.WithCatalog(reg)), "the plan names only the registry's workers")
		assert.False(t, rep.Has(critic.Critical), "%v", rep.Issues)
	}
}

// mission is a mission the planner plans and the executor runs.
type mission struct {
	text string
	// check asserts, for a capable model, that the outputs of a completed
	// execution hold the answer.
	check func(t *testing.T, outputs map[string]any)
}

// runMission plans m with the meta-planner, checks the planning, and runs
// an accepted plan with the executor, the same planner replanning.
func runMission(t *testing.T, m mission) {
	e := newEnv(t)
	reg, wc, err := newRegistry(registryOptions{})
	require.NoError(t, err)
	planner := e.planner(reg)

	res, err := planner.Plan(e.ctx, m.text)
	assert.GreaterOrEqual(t, e.meter.Calls(), 1, "the planner called the model")
	assert.Greater(t, e.meter.Usage().Total(), 0, "the meter counted the tokens")
	ok := checkPlanning(t, reg, "plan", e.tap.exchanges(plannerCall), res, err, maxCorrections()+1)
	if suite.Strict {
		require.NoError(t, err, "a capable model writes a valid plan")
		require.Equal(t, metaplanner.RoutePlan, res.Route, "this mission needs its files read: a plan")
	}
	if !ok {
		return
	}

	obs := &events{}
	before := e.meter.Calls()
	xr, xerr := executor.Execute(e.ctx, res.Plan, m.text, e.executorOptions(reg, obs, planner)...)
	checkExecution(t, xr, xerr, obs, wc)
	if agents := len(e.tap.exchanges(agentCall)); agents > 0 {
		assert.GreaterOrEqual(t, e.meter.Calls()-before, agents, "the meter counts the agents' calls")
		assert.Greater(t, xr.Usage.Total(), 0, "the execution counts its LLM usage")
	}
	if suite.Strict {
		require.Equal(t, runner.StatusCompleted, xr.Status, "the plan completes: %v", xr.Err)
		m.check(t, xr.Outputs())
	}
}

// TestMissionWordCount: read a file and count its words, with the workers.
func TestMissionWordCount(t *testing.T) {
	runMission(t, mission{
		text: "How many words are in the file poem.txt? Read it with read_file and count them with count_words.",
		check: func(t *testing.T, outputs map[string]any) {
			assert.True(t, findNumber(outputs, poemWords), "an output holds the word count %d: %v", poemWords, outputs)
		},
	})
}

// TestMissionCalculator: arithmetic, with the calc command worker or an
// agent with the calculate tool.
func TestMissionCalculator(t *testing.T) {
	runMission(t, mission{
		text: "Compute (17 + 25) * 3 exactly, with the calc worker or the calculate tool.",
		check: func(t *testing.T, outputs map[string]any) {
			assert.True(t, findNumber(outputs, 126), "an output holds 126: %v", outputs)
		},
	})
}

// TestMissionCompareFiles: two reads in parallel, two counts, a comparison.
func TestMissionCompareFiles(t *testing.T) {
	runMission(t, mission{
		text: "Which file has more words, notes/alpha.txt or notes/beta.txt? Read both and count their words with the workers.",
		check: func(t *testing.T, outputs map[string]any) {
			assert.True(t, findNumber(outputs, betaWords), "an output holds beta's count %d: %v", betaWords, outputs)
			assert.True(t, findNumber(outputs, alphaWords), "an output holds alpha's count %d: %v", alphaWords, outputs)
		},
	})
}

// replanCall is one call of the replanner, with what the model was asked.
type replanCall struct {
	mission   string
	completed map[string]any
	failure   executor.Failure
	history   []executor.Trial
	res       *metaplanner.Result
	err       error
	requests  []exchange
}

// spy is a Replanner that records the calls it forwards to the planner.
type spy struct {
	next *metaplanner.Planner
	tap  *tap
	mu   sync.Mutex
	all  []replanCall
}

// Repair asks the planner's Replan, to record its whole result, and
// answers as the planner's own Repair does.
func (s *spy) Repair(ctx context.Context, mission string, completed map[string]any, f executor.Failure, history []executor.Trial) (*executor.Repair, error) {
	before := len(s.tap.exchanges(plannerCall))
	res, err := s.next.Replan(ctx, mission, completed, f, history)
	c := replanCall{mission: mission, completed: completed, failure: f, history: history, res: res, err: err,
		requests: s.tap.exchanges(plannerCall)[before:]}
	s.mu.Lock()
	s.all = append(s.all, c)
	s.mu.Unlock()
	if err != nil {
		return &executor.Repair{Usage: res.Usage}, err
	}
	return &executor.Repair{Plan: res.Plan, Usage: res.Usage}, nil
}

func (s *spy) calls() []replanCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]replanCall(nil), s.all...)
}

// injectedPlan reads poem.txt and counts its words on a worker that fails
// its first call; the count asks for a replan when it fails.
const injectedPlan = `{
  "mission": "Count the words in the file poem.txt",
  "tasks": [
    {"id": "read", "agent": "read_file", "input": "poem.txt"},
    {"id": "count", "agent": "count_words", "depends_on": ["read"], "input": "Count the words of {{results.read.path}}",
     "on_failure": "replan"}
  ]
}`

// TestInjectedFailureReplan runs a fixed plan whose count_words worker fails
// the first time, with on_failure replan: executor.Execute must hand the
// failure (class and task) to the meta-planner's Replan, keep the completed
// read without running it again, and, with a capable model, complete the
// repaired plan.
func TestInjectedFailureReplan(t *testing.T) {
	e := newEnv(t)
	reg, wc, err := newRegistry(registryOptions{flakyCount: true, only: []string{"read_file", "count_words"}})
	require.NoError(t, err)
	p, err := plan.Parse([]byte(injectedPlan))
	require.NoError(t, err)
	require.NoError(t, p.Validate(plan.WithCatalog(reg)))

	sp := &spy{next: e.planner(reg), tap: e.tap}
	obs := &events{}
	xr, xerr := executor.Execute(e.ctx, p, "", e.executorOptions(reg, obs, sp)...)
	checkExecution(t, xr, xerr, obs, wc)

	// The injected failure happened, and only once.
	counts := wc.ofWorker("count_words")
	require.NotEmpty(t, counts)
	assert.ErrorIs(t, counts[0].Err, errInjected, "the first count fails")
	for _, c := range counts[1:] {
		assert.NoError(t, c.Err, "later counts succeed")
	}
	// The completed read ran exactly once, whatever the repair.
	assert.Len(t, wc.ofTask("read"), 1, "the completed task read never runs again")
	require.Contains(t, xr.Tasks, "read")
	assert.Equal(t, runner.TaskDone, xr.Tasks["read"].Status)

	// The replanner was asked, with the failure's class and task.
	calls := sp.calls()
	require.NotEmpty(t, calls, "the failure of count reached the replanner")
	first := calls[0]
	assert.Equal(t, "count", first.failure.TaskID)
	assert.Equal(t, string(runner.ClassAgentError), first.failure.Class)
	assert.Contains(t, first.failure.Diagnosis, "injected failure")
	assert.Contains(t, first.completed, "read", "the completed read is handed over")
	assert.NotContains(t, first.completed, "count")
	assert.Same(t, p, first.failure.Plan, "the plan that ran")
	assert.Empty(t, first.history, "no repair before the first")

	accepted := 0
	for i, c := range calls {
		op := fmt.Sprintf("replan %d", i+1)
		if checkPlanning(t, reg, op, c.requests, c.res, c.err, min(1, maxCorrections())+1) {
			accepted++
			var ids []string
			for _, task := range c.res.Plan.Tasks {
				ids = append(ids, task.ID)
			}
			for id := range c.completed {
				assert.Contains(t, ids, id, "%s: the repair keeps completed task %s", op, id)
			}
		}
		if i > 0 {
			assert.Len(t, c.history, i, "%s: the earlier repairs are in the history", op)
		}
	}
	assert.Equal(t, accepted, xr.ReplanCount, "every accepted repair ran")
	if accepted > 0 {
		assert.Equal(t, "count", xr.History[0].TaskID)
		assert.Equal(t, string(runner.ClassAgentError), xr.History[0].Class)
	}
	if calls[len(calls)-1].err != nil {
		assert.Equal(t, executor.HaltReplanFailed, xr.Halt, "a failed replan halts the execution")
		assert.Equal(t, runner.StatusFailed, xr.Status)
	}

	if suite.Strict {
		require.NoError(t, first.err, "a capable model repairs the plan")
		require.Equal(t, runner.StatusCompleted, xr.Status, "the repaired plan completes: %v", xr.Err)
		assert.GreaterOrEqual(t, xr.ReplanCount, 1)
		assert.GreaterOrEqual(t, xr.ExecutionAttempts, 2)
	}
}

// subAgentPlan has an LLM sub-agent with a registry tool and an output
// schema read a worker's result.
const subAgentPlan = `{
  "mission": "Summarise notes/alpha.txt",
  "agents": {"writer": {"prompt": "You summarise notes.", "tools": ["word_count"]}},
  "tasks": [
    {"id": "read", "agent": "read_file", "input": "notes/alpha.txt"},
    {"id": "summary", "agent": "writer", "depends_on": ["read"],
     "input": "Summarise the text of results.read in a few words and give its word count.",
     "output_schema": {"type": "object", "additionalProperties": false, "required": ["words", "summary"],
                       "properties": {"words": {"type": "integer"}, "summary": {"type": "string"}}}}
  ]
}`

// TestSubAgent runs a fixed plan whose LLM sub-agent reads a worker's
// result: the prompt's layout (the agent's prompt in the system message,
// the upstream result as a data block in the user message), its tools from
// the registry and the task's output schema as structured output.
func TestSubAgent(t *testing.T) {
	e := newEnv(t)
	reg, wc, err := newRegistry(registryOptions{})
	require.NoError(t, err)
	p, err := plan.Parse([]byte(subAgentPlan))
	require.NoError(t, err)

	obs := &events{}
	xr, xerr := executor.Execute(e.ctx, p, "", e.executorOptions(reg, obs, nil)...)
	checkExecution(t, xr, xerr, obs, wc)

	xs := e.tap.exchanges(agentCall)
	require.NotEmpty(t, xs, "the sub-agent called the model")
	for i, x := range xs {
		require.NoError(t, x.err, "agent request %d", i+1)
		assert.Greater(t, x.resp.Usage.PromptTokens, 0)
		msgs := x.req.Messages
		require.GreaterOrEqual(t, len(msgs), 2)
		assert.Equal(t, llm.RoleSystem, msgs[0].Role)
		assert.True(t, strings.HasPrefix(msgs[0].Content, "You summarise notes."), "the agent's prompt opens the system message")
		assert.NotContains(t, msgs[0].Content, "Alpha notes", "no upstream data in the system message")
		assert.Equal(t, llm.RoleUser, msgs[1].Role)
		assert.Contains(t, msgs[1].Content, `<data source="results.read">`, "the upstream result is a data block")
		assert.Contains(t, msgs[1].Content, "Alpha notes: ship the parser first.")
		require.Len(t, x.req.Tools, 1)
		assert.Equal(t, "word_count", x.req.Tools[0].Name, "the tools named by the plan agent, from the registry")
		require.NotNil(t, x.req.Schema, "the output schema is asked for as structured output")
		assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["words","summary"],"properties":{"words":{"type":"integer"},"summary":{"type":"string"}}}`, string(x.req.Schema.Schema))
		if len(x.resp.Message.ToolCalls) == 0 {
			checkStructured(t, fmt.Sprintf("agent answer %d", i+1), x.resp)
		}
	}
	assert.Equal(t, e.meter.Calls(), len(xs), "every call went through the meter")
	assert.Greater(t, xr.Usage.Total(), 0, "the run counts the agent's tokens")

	sum := xr.Tasks["summary"]
	require.NotNil(t, sum)
	switch sum.Status {
	case runner.TaskDone:
		out, ok := sum.Output.(map[string]any)
		require.True(t, ok, "the output is the JSON object of the schema: %#v", sum.Output)
		assert.IsType(t, json.Number(""), out["words"], "words is a number")
		assert.IsType(t, "", out["summary"], "summary is a string")
	default:
		require.Error(t, sum.Err, "a task that is not done says why")
		t.Logf("summary: %s, class %s: %v", sum.Status, runner.Classify(sum.Err), sum.Err)
	}
	if suite.Strict {
		require.Equal(t, runner.StatusCompleted, xr.Status, "%v", xr.Err)
		out, _ := sum.Output.(map[string]any)
		assert.Equal(t, json.Number(fmt.Sprint(alphaWords)), out["words"], "notes/alpha.txt has %d words", alphaWords)
	}
}
