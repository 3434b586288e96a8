package llm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingClient answers every request with usage and counts the calls
// that reached it.
func countingClient(n *atomic.Int64, usage Usage) Client {
	return ClientFunc(func(context.Context, Request) (Response, error) {
		n.Add(1)
		return Response{Message: Message{Role: RoleAssistant, Content: "ok"}, Usage: usage}, nil
	})
}

// callConcurrently makes n calls at once and returns their errors.
func callConcurrently(c Client, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = c.Complete(context.Background(), userRequest("hi"))
		})
	}
	wg.Wait()
	return errs
}

func TestMeter(t *testing.T) {
	tests := []struct {
		name       string
		budget     Budget
		calls      int
		usage      Usage
		wantServed int
		wantUsage  Usage
	}{
		{name: "no budget", calls: 50, usage: Usage{10, 5}, wantServed: 50, wantUsage: Usage{500, 250}},
		{name: "call budget", budget: Budget{MaxCalls: 10}, calls: 50, usage: Usage{1, 1}, wantServed: 10, wantUsage: Usage{10, 10}},
		{name: "call budget not reached", budget: Budget{MaxCalls: 100}, calls: 50, usage: Usage{1, 1}, wantServed: 50, wantUsage: Usage{50, 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var served atomic.Int64
			m := NewMeter(countingClient(&served, tt.usage), tt.budget)
			errs := callConcurrently(m, tt.calls)
			refused := 0
			for _, err := range errs {
				if err != nil {
					require.ErrorIs(t, err, ErrBudgetExceeded)
					refused++
				}
			}
			assert.EqualValues(t, tt.wantServed, served.Load())
			assert.Equal(t, tt.calls-tt.wantServed, refused)
			assert.Equal(t, tt.wantServed, m.Calls())
			assert.Equal(t, tt.wantUsage, m.Usage())
			assert.Equal(t, tt.budget, m.Budget())
		})
	}
}

func TestMeterTokenBudget(t *testing.T) {
	var served atomic.Int64
	m := NewMeter(countingClient(&served, Usage{PromptTokens: 20, CompletionTokens: 10}), Budget{MaxTokens: 100})
	for range 4 { // 0, 30, 60, 90 tokens used before each: all under 100
		_, err := m.Complete(context.Background(), userRequest("hi"))
		require.NoError(t, err)
	}
	_, err := m.Complete(context.Background(), userRequest("hi"))
	require.ErrorIs(t, err, ErrBudgetExceeded)
	assert.Equal(t, "llm: budget exceeded: 120 tokens used of a budget of 100", err.Error())
	assert.EqualValues(t, 4, served.Load(), "the refused call must not reach the client")
	assert.Equal(t, 4, m.Calls())
	assert.Equal(t, 120, m.Usage().Total())
}

func TestMeterTokenBudgetConcurrent(t *testing.T) {
	var served atomic.Int64
	m := NewMeter(countingClient(&served, Usage{PromptTokens: 1}), Budget{MaxTokens: 10})
	for range 5 {
		callConcurrently(m, 20)
	}
	// Calls in flight may overshoot, but once the budget is spent every
	// later call is refused.
	used := m.Usage().Total()
	assert.GreaterOrEqual(t, used, 10)
	assert.EqualValues(t, used, served.Load())
	_, err := m.Complete(context.Background(), userRequest("hi"))
	assert.ErrorIs(t, err, ErrBudgetExceeded)
}

func TestMeterCountsFailedCalls(t *testing.T) {
	boom := errors.New("boom")
	m := NewMeter(ClientFunc(func(context.Context, Request) (Response, error) {
		return Response{Usage: Usage{PromptTokens: 7}}, boom
	}), Budget{MaxCalls: 2})
	_, err := m.Complete(context.Background(), userRequest("hi"))
	require.ErrorIs(t, err, boom)
	_, err = m.Complete(context.Background(), userRequest("hi"))
	require.ErrorIs(t, err, boom)
	_, err = m.Complete(context.Background(), userRequest("hi"))
	require.ErrorIs(t, err, ErrBudgetExceeded)
	assert.Equal(t, "llm: budget exceeded: 2 calls made of a budget of 2", err.Error())
	assert.Equal(t, 2, m.Calls())
	assert.Equal(t, Usage{PromptTokens: 14}, m.Usage())
}

func TestMeterCharge(t *testing.T) {
	tests := []struct {
		name    string
		budget  Budget
		spent   Usage
		calls   int
		served  int64
		refusal string
	}{
		{name: "calls left", budget: Budget{MaxCalls: 3}, calls: 2, served: 1, refusal: "llm: budget exceeded: 3 calls made of a budget of 3"},
		{name: "calls spent", budget: Budget{MaxCalls: 3}, calls: 3, refusal: "llm: budget exceeded: 3 calls made of a budget of 3"},
		{name: "tokens spent", budget: Budget{MaxTokens: 100}, spent: Usage{PromptTokens: 90, CompletionTokens: 10}, refusal: "llm: budget exceeded: 100 tokens used of a budget of 100"},
		{name: "tokens left", budget: Budget{MaxTokens: 100}, spent: Usage{PromptTokens: 50}, served: 1, refusal: "llm: budget exceeded: 110 tokens used of a budget of 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var served atomic.Int64
			m := NewMeter(countingClient(&served, Usage{PromptTokens: 50, CompletionTokens: 10}), tt.budget)
			m.Charge(tt.spent, tt.calls)
			var err error
			for err == nil {
				_, err = m.Complete(context.Background(), userRequest("hi"))
			}
			require.ErrorIs(t, err, ErrBudgetExceeded)
			assert.Equal(t, tt.refusal, err.Error())
			assert.Equal(t, tt.served, served.Load())
		})
	}
}
