package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// testRegistry holds the workers of the activity tests.
func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.New()
	add := func(name string, w registry.Worker) { require.NoError(t, reg.Register(name, w)) }
	add("echo", registry.Worker{Outputs: []string{"text"}, Timeout: time.Minute, MaxConcurrency: 2,
		Agent: agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
			return agent.Result{Output: map[string]any{"text": req.Input, "n": 12345678901234567}, Usage: agent.Usage{PromptTokens: 3}}, nil
		})})
	add("slotless", registry.Worker{Outputs: []string{"text"},
		Agent: agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: "plain"}, nil })})
	add("sleeper", registry.Worker{Agent: agent.Func(func(ctx context.Context, _ agent.Request) (agent.Result, error) {
		<-ctx.Done()
		return agent.Result{}, ctx.Err()
	})})
	add("panics", registry.Worker{Agent: agent.Func(func(context.Context, agent.Request) (agent.Result, error) { panic("boom") })})
	add("reports", registry.Worker{Agent: agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, &agent.FailureReport{Class: "rate_limited", Message: "slow down"}
	})})
	add("guarded", registry.Worker{Preconditions: []string{`(= data/input "go")`},
		Agent: agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: "ran"}, nil })})
	return reg
}

func runAttempt(t *testing.T, a *Activities, in AttemptRequest) AttemptReply {
	t.Helper()
	env := quietSuite().NewTestActivityEnvironment()
	a.Register(env)
	v, err := env.ExecuteActivity(ActivityAttempt, in)
	require.NoError(t, err)
	var r AttemptReply
	require.NoError(t, v.Get(&r))
	return r
}

func TestAttempt(t *testing.T) {
	a := NewActivities(testRegistry(t), WithHeartbeat(10*time.Millisecond))
	req := func(ag, input string) agent.Request {
		return agent.Request{RunID: "r", TaskID: "t", Agent: ag, Input: input, Attempt: 1}
	}

	ok := runAttempt(t, a, AttemptRequest{Request: req("echo", "hi"), Timeout: time.Second})
	assert.Nil(t, ok.Failure)
	assert.JSONEq(t, `{"text":"hi","n":12345678901234567}`, string(ok.Output))
	assert.Equal(t, 3, ok.Usage.PromptTokens)

	tests := []struct {
		name     string
		in       AttemptRequest
		class    runner.Class
		timedOut bool
	}{
		{"timeout", AttemptRequest{Request: req("sleeper", ""), Timeout: 50 * time.Millisecond}, runner.ClassTimeout, true},
		{"panic", AttemptRequest{Request: req("panics", ""), Timeout: time.Second}, runner.ClassPanic, false},
		{"report", AttemptRequest{Request: req("reports", ""), Timeout: time.Second}, "rate_limited", false},
		{"precondition", AttemptRequest{Request: req("guarded", "stop"), Timeout: time.Second}, runner.ClassPrecondition, false},
		{"declared outputs", AttemptRequest{Request: req("slotless", ""), Timeout: time.Second}, runner.ClassInvalidOutput, false},
		{"no agent", AttemptRequest{Request: req("nobody", ""), Timeout: time.Second}, runner.ClassAgentError, false},
		{"plan agent without LLM", AttemptRequest{Request: req("writer", ""), Agent: &plan.Agent{Prompt: "write"}, Timeout: time.Second}, runner.ClassAgentError, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAttempt(t, a, tt.in)
			require.NotNil(t, r.Failure)
			assert.Equal(t, tt.class, r.Failure.Class)
			assert.Equal(t, tt.timedOut, r.Failure.TimedOut)
			assert.Empty(t, r.Output)
		})
	}
	r := runAttempt(t, a, AttemptRequest{Request: req("guarded", "go"), Timeout: time.Second})
	assert.Nil(t, r.Failure)
	assert.JSONEq(t, `"ran"`, string(r.Output))
}

func TestAttemptNoLLM(t *testing.T) {
	r := runAttempt(t, NewActivities(nil), AttemptRequest{Request: agent.Request{TaskID: "t", Agent: "writer"}, Agent: &plan.Agent{}})
	require.NotNil(t, r.Failure)
	assert.Equal(t, runner.ClassAgentError, r.Failure.Class)
	assert.Contains(t, r.Failure.Message, ErrNoLLM.Error())
}

func TestCatalog(t *testing.T) {
	env := quietSuite().NewTestActivityEnvironment()
	NewActivities(testRegistry(t)).Register(env)
	v, err := env.ExecuteActivity(ActivityCatalog)
	require.NoError(t, err)
	var c Catalog
	require.NoError(t, v.Get(&c))
	assert.Equal(t, WorkerInfo{Outputs: []string{"text"}, Timeout: time.Minute, MaxConcurrency: 2}, c.Workers["echo"])
	slots, ok := c.WorkerOutputs("sleeper")
	assert.True(t, ok)
	assert.Nil(t, slots)
	_, ok = c.WorkerOutputs("nobody")
	assert.False(t, ok)
	assert.False(t, c.HasTool("search"))

	p, err := plan.Parse(json.RawMessage(`{"tasks":[{"id":"a","agent":"echo","input":"x"},{"id":"b","agent":"echo","depends_on":["a"],"input":"y","inputs":{"v":{"from":"a","slot":"nope"}}}]}`))
	require.NoError(t, err)
	_, err = p.DAG(plan.WithCatalog(&c))
	assert.Error(t, err, "the snapshot checks slots as the registry does")
}

// quietSuite is a test suite whose environments log only warnings: the
// SDK's default logger writes every activity result at debug level. (A
// structured logger needs a *slog.Logger: log.NewStructuredLogger(nil)
// panics.)
func quietSuite() *testsuite.WorkflowTestSuite {
	s := &testsuite.WorkflowTestSuite{}
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	return s
}

func TestRepair(t *testing.T) {
	answer := `{"route": "plan", "reason": "retry with the fixer", "plan": {"mission": "ship", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "c", "agent": "echo", "input": "again", "depends_on": ["a"]}]}}`
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Content: answer}, Usage: llm.Usage{PromptTokens: 90, CompletionTokens: 10}}, nil
	})
	env := quietSuite().NewTestActivityEnvironment()
	NewActivities(testRegistry(t), WithLLM(model)).Register(env)
	v, err := env.ExecuteActivity(ActivityRepair, RepairRequest{
		Mission: "ship", Completed: map[string]any{"a": "start"},
		Failure: executor.Failure{TaskID: "b", Class: "agent_error", Diagnosis: "broken"},
	})
	require.NoError(t, err)
	var r RepairReply
	require.NoError(t, v.Get(&r))
	require.Nil(t, r.Failure)
	require.NotNil(t, r.Plan)
	assert.Len(t, r.Plan.Tasks, 2)
	assert.Equal(t, "retry with the fixer", r.Reason)
	assert.Equal(t, 100, r.Usage.Total())
	assert.Equal(t, 1, r.Calls)
	assert.GreaterOrEqual(t, r.Report.Score, 1)

	env = quietSuite().NewTestActivityEnvironment()
	NewActivities(nil).Register(env)
	v, err = env.ExecuteActivity(ActivityRepair, RepairRequest{Mission: "ship"})
	require.NoError(t, err, "no LLM is a failure of the repair, not of the activity")
	require.NoError(t, v.Get(&r))
	require.NotNil(t, r.Failure)
	assert.Contains(t, r.Failure.Message, ErrNoLLM.Error())
}

func TestJudge(t *testing.T) {
	j := judgeFunc(func(_ context.Context, req runner.JudgeRequest) (runner.Verdict, error) {
		if req.Output == "bad" {
			return runner.Verdict{}, errors.New("judge unreachable")
		}
		return runner.Verdict{Pass: true, Reason: "fine", Usage: llm.Usage{PromptTokens: 4}}, nil
	})
	env := quietSuite().NewTestActivityEnvironment()
	NewActivities(nil, WithJudge(j)).Register(env)
	judged := func(out any) JudgeReply {
		v, err := env.ExecuteActivity(ActivityJudge, JudgeRequest{Request: runner.JudgeRequest{TaskID: "t", Output: out}, Timeout: time.Second, Model: "m"})
		require.NoError(t, err)
		var r JudgeReply
		require.NoError(t, v.Get(&r))
		return r
	}
	ok := judged("good")
	assert.Nil(t, ok.Failure)
	assert.Equal(t, runner.Verdict{Pass: true, Reason: "fine", Usage: llm.Usage{PromptTokens: 4}}, ok.Verdict)
	bad := judged("bad")
	require.NotNil(t, bad.Failure)
	assert.Equal(t, "judge unreachable", bad.Failure.Message)
}

type judgeFunc func(context.Context, runner.JudgeRequest) (runner.Verdict, error)

func (f judgeFunc) Judge(ctx context.Context, req runner.JudgeRequest) (runner.Verdict, error) {
	return f(ctx, req)
}

// An attempt whose activity is cut short — its worker stops — is an
// error of the activity, which Temporal makes again elsewhere, not a
// failure of the agent that the task's policy would count.
func TestAttemptCutShortIsAnActivityError(t *testing.T) {
	a := NewActivities(testRegistry(t), WithHeartbeat(10*time.Millisecond))
	env := quietSuite().NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context, in AttemptRequest) (AttemptReply, error) {
		ctx, stop := context.WithCancel(ctx)
		time.AfterFunc(30*time.Millisecond, stop)
		return a.Attempt(ctx, in)
	}, activity.RegisterOptions{Name: ActivityAttempt})
	_, err := env.ExecuteActivity(ActivityAttempt, AttemptRequest{
		Request: agent.Request{RunID: "r", TaskID: "t", Agent: "sleeper", Attempt: 1}, Timeout: time.Minute})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the attempt was cut short on this worker")
}

// A repair heartbeats while its planner works, and the planner's deadline
// comes before the activity's, so that an overrun is a reply.
func TestRepairHeartbeatsAndEndsBeforeItsActivity(t *testing.T) {
	var deadline time.Time
	model := llm.ClientFunc(func(ctx context.Context, _ llm.Request) (llm.Response, error) {
		deadline, _ = ctx.Deadline()
		time.Sleep(100 * time.Millisecond)
		return llm.Response{}, context.DeadlineExceeded
	})
	env := quietSuite().NewTestActivityEnvironment()
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	NewActivities(testRegistry(t), WithLLM(model), WithHeartbeat(10*time.Millisecond)).Register(env)
	start := time.Now()
	v, err := env.ExecuteActivity(ActivityRepair, RepairRequest{Mission: "ship",
		Failure: executor.Failure{TaskID: "b", Class: "agent_error", Diagnosis: "broken"}})
	require.NoError(t, err)
	var r RepairReply
	require.NoError(t, v.Get(&r))
	require.NotNil(t, r.Failure, "the planner's error is a reply")
	// The SDK throttles heartbeats to one a window; one tells that it
	// heartbeats.
	assert.Positive(t, beats.Load(), "it heartbeats while the planner works")
	require.False(t, deadline.IsZero())
	assert.WithinDuration(t, start.Add(repairTimeout-repairGrace), deadline, 5*time.Second)
}

// An attempt heartbeats at least three times per heartbeat timeout,
// however seldom its worker's heartbeat is set: a run's short heartbeat
// timeout does not have its attempts deemed lost while they work.
func TestAttemptHeartbeatsWithinItsTimeout(t *testing.T) {
	var calls atomic.Int32
	slow := agent.Func(func(ctx context.Context, _ agent.Request) (agent.Result, error) {
		calls.Add(1)
		select {
		case <-time.After(1500 * time.Millisecond):
			return agent.Result{Output: "done"}, nil
		case <-ctx.Done():
			return agent.Result{}, ctx.Err()
		}
	})
	e := env(t, workers(t, map[string]agent.Agent{"slow": slow}), WithHeartbeat(time.Hour))
	p := mustPlan(t, `{"tasks": [{"id": "a", "agent": "slow", "input": "x"}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "beats", Spec: durable.Spec{Plan: p}, HeartbeatTimeout: 600 * time.Millisecond})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	assert.Equal(t, int32(1), calls.Load(), "the attempt was never deemed lost")
}
