package durable_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

// judgeLLM answers every request with the next of its verdicts and
// records the models asked.
type judgeLLM struct {
	mu       sync.Mutex
	verdicts []string
	models   []string
}

func (j *judgeLLM) client() durable.ClientFunc {
	return func(string, bool) (llm.Client, error) {
		return llm.ClientFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
			j.mu.Lock()
			defer j.mu.Unlock()
			n := len(j.models)
			j.models = append(j.models, req.Model)
			return llm.Response{
				Message: llm.Message{Role: llm.RoleAssistant, Content: j.verdicts[min(n, len(j.verdicts)-1)]},
				Usage:   llm.Usage{PromptTokens: 10, CompletionTokens: 5},
			}, nil
		}), nil
	}
}

const judgedPlan = `{"mission": "sum up", "tasks": [{"id": "a", "agent": "w", "input": "write", "max_retries": 2, "rubric": "says hello"}]}`

func TestJudgeSpec(t *testing.T) {
	const (
		pass = `{"pass": true, "reason": "ok"}`
		fail = `{"pass": false, "reason": "no hello"}`
	)
	tests := []struct {
		name     string
		judge    *durable.JudgeSpec
		budget   executor.Budget
		replan   bool
		verdicts []string
		status   durable.Status
		calls    int
		class    runner.Class
	}{
		{name: "off", verdicts: []string{fail}, status: durable.StatusCompleted, calls: 0},
		{name: "pass", judge: &durable.JudgeSpec{Model: "jm"}, verdicts: []string{pass}, status: durable.StatusCompleted, calls: 1},
		{name: "fail, retry, pass", judge: &durable.JudgeSpec{Model: "jm"}, verdicts: []string{fail, pass}, status: durable.StatusCompleted, calls: 2},
		{name: "the judge's own budget", judge: &durable.JudgeSpec{Model: "jm", MaxCalls: 1}, verdicts: []string{fail}, status: durable.StatusFailed, calls: 1, class: runner.ClassBudget},
		{name: "the run's budget", judge: &durable.JudgeSpec{Model: "jm"}, budget: executor.Budget{MaxCalls: 2}, replan: true, verdicts: []string{fail}, status: durable.StatusFailed, calls: 2, class: runner.ClassBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &judgeLLM{verdicts: tt.verdicts}
			w := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
				return agent.Result{Output: "hi"}, nil
			})
			spec := durable.Spec{Plan: mustPlan(t, judgedPlan), Judge: tt.judge, Budget: tt.budget}
			if tt.replan {
				spec.Replan = durable.ReplanDefaults()
			}
			out, err := durable.Start(context.Background(), openStore(t), spec, durable.WithAgent("w", w), durable.WithLLM(m.client()))
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status, "%v", out.Result.Err)
			assert.Len(t, m.models, tt.calls)
			for _, model := range m.models {
				assert.Equal(t, "jm", model)
			}
			assert.Equal(t, tt.class, runner.Classify(out.Result.Tasks["a"].Err))
			if tt.replan && tt.class == runner.ClassBudget {
				assert.ErrorIs(t, out.Result.Err, executor.ErrHalted)
				assert.Equal(t, executor.HaltBudget, out.Execution.Halt)
			}
		})
	}
}
