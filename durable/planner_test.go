package durable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
)

// planModel answers every request with answer, and records the requests.
type planModel struct {
	answer string

	mu   sync.Mutex
	reqs []llm.Request
}

func (m *planModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: m.answer}}, nil
}

func (m *planModel) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs
}

func TestPlannerOptions(t *testing.T) {
	const answer = `{"route": "synthesis", "answer": "Hello."}`
	temp := 0.3
	tests := []struct {
		name     string
		spec     durable.LLMSpec
		route    metaplanner.Route
		attempts int // requests sent
		noPlan   bool
	}{
		{name: "the planner's defaults", spec: durable.LLMSpec{}, route: metaplanner.RouteSynthesis, attempts: 1},
		{name: "a temperature", spec: durable.LLMSpec{Temperature: &temp}, route: metaplanner.RouteSynthesis, attempts: 1},
		{name: "plan only, no correction", spec: durable.LLMSpec{PlanOnly: true}, attempts: 1, noPlan: true},
		{name: "plan only, two corrections", spec: durable.LLMSpec{PlanOnly: true, MaxCorrections: 2}, attempts: 3, noPlan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &planModel{answer: answer}
			res, err := metaplanner.New(m, tt.spec.PlannerOptions()...).Plan(context.Background(), "Greet the user")
			reqs := m.requests()
			require.Len(t, reqs, tt.attempts)
			for _, req := range reqs {
				assert.Equal(t, tt.spec.Temperature, req.Temperature)
				assert.Empty(t, req.Model, "the model is the client's")
			}
			if tt.noPlan {
				require.ErrorIs(t, err, metaplanner.ErrNoValidPlan, "a direct answer is forbidden")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.route, res.Route)
		})
	}
}

// Brief gives the planner short prompts.
func TestPlannerOptionsBrief(t *testing.T) {
	promptOf := func(spec durable.LLMSpec) int {
		m := &planModel{answer: `{"route": "synthesis", "answer": "Hello."}`}
		_, err := metaplanner.New(m, spec.PlannerOptions()...).Plan(context.Background(), "Greet the user")
		require.NoError(t, err)
		n := 0
		for _, msg := range m.requests()[0].Messages {
			n += len(msg.Content)
		}
		return n
	}
	assert.Less(t, promptOf(durable.LLMSpec{Brief: true}), promptOf(durable.LLMSpec{}))
}

// A host plans a mission itself with the settings a run of it would
// have, here for a run nobody attends: a direct answer is no plan.
func ExampleLLMSpec_PlannerOptions() {
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: `{"route": "synthesis", "answer": "Hello."}`}}, nil
	})
	spec := durable.LLMSpec{PlanOnly: true, MaxCorrections: 1}
	_, err := metaplanner.New(model, spec.PlannerOptions()...).Plan(context.Background(), "Greet the user")
	var pe *metaplanner.PlanError
	if errors.As(err, &pe) {
		fmt.Println("no plan after", pe.Attempts, "attempts:", pe.Report.Issues[0].Check)
	}
	// Output:
	// no plan after 2 attempts: forbidden_route
}
