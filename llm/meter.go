package llm

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrBudgetExceeded reports a call refused because the [Meter]'s budget is
// spent. The call did not reach the wrapped client.
var ErrBudgetExceeded = errors.New("llm: budget exceeded")

// Budget limits a [Meter]. Zero fields mean no limit.
type Budget struct {
	// MaxTokens bounds prompt plus completion tokens. It is checked before
	// each call: a call starts while fewer tokens than MaxTokens are used,
	// so the calls in flight when the budget runs out may overshoot it.
	MaxTokens int
	// MaxCalls bounds the calls that reach the wrapped client; it is never
	// exceeded, even by concurrent calls.
	MaxCalls int
}

// Meter is a [Client] that counts the calls and tokens of the Client it
// wraps and enforces a [Budget]. It is safe for concurrent use. There is no
// useful zero Meter: create it with [NewMeter].
type Meter struct {
	client     Client
	budget     Budget
	calls      atomic.Int64
	prompt     atomic.Int64
	completion atomic.Int64
}

var _ Client = (*Meter)(nil)

// NewMeter returns a [Meter] of c limited by b (the zero [Budget] is no limit).
func NewMeter(c Client, b Budget) *Meter {
	return &Meter{client: c, budget: b}
}

// Complete forwards req to the wrapped client unless the budget is spent,
// in which case it fails with [ErrBudgetExceeded]. The usage of the answer is
// counted even when the call fails (a [Response] returned with an error may
// carry the tokens it cost).
func (m *Meter) Complete(ctx context.Context, req Request) (Response, error) {
	if limit := m.budget.MaxTokens; limit > 0 {
		if used := m.Usage().Total(); used >= limit {
			return Response{}, fmt.Errorf("%w: %d tokens used of a budget of %d", ErrBudgetExceeded, used, limit)
		}
	}
	if limit := int64(m.budget.MaxCalls); limit > 0 {
		for {
			n := m.calls.Load()
			if n >= limit {
				return Response{}, fmt.Errorf("%w: %d calls made of a budget of %d", ErrBudgetExceeded, n, limit)
			}
			if m.calls.CompareAndSwap(n, n+1) {
				break
			}
		}
	} else {
		m.calls.Add(1)
	}
	resp, err := m.client.Complete(ctx, req)
	m.prompt.Add(int64(resp.Usage.PromptTokens))
	m.completion.Add(int64(resp.Usage.CompletionTokens))
	return resp, err
}

// Usage is the tokens counted so far.
func (m *Meter) Usage() Usage {
	return Usage{PromptTokens: int(m.prompt.Load()), CompletionTokens: int(m.completion.Load())}
}

// Calls is the number of calls that reached the wrapped client, failed ones
// included.
func (m *Meter) Calls() int { return int(m.calls.Load()) }

// Charge counts u and calls as spent before any call of m, as if they had
// gone through it: a budget shared by calls made in several processes
// goes on in each from what the others spent. The next call is refused,
// as any call over the budget is, once the charge spends it.
func (m *Meter) Charge(u Usage, calls int) {
	m.calls.Add(int64(calls))
	m.prompt.Add(int64(u.PromptTokens))
	m.completion.Add(int64(u.CompletionTokens))
}

// Budget is the Meter's budget.
func (m *Meter) Budget() Budget { return m.budget }
