package temporal

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/llm"
)

// Allowance is the run's LLM budget as an activity starts: the spec's
// bounds ([github.com/dagent-dev/dagent/durable.Spec].Budget and
// JudgeSpec.MaxCalls) and what the run spent before. The worker charges
// its meter of the activity's LLM calls with Spent, so that it refuses a
// call with [llm.ErrBudgetExceeded], in the words the run's meter uses in
// process, once the run's budget is spent.
type Allowance struct {
	MaxTokens int `json:"max_tokens,omitempty"`
	MaxCalls  int `json:"max_calls,omitempty"`
	// JudgeMaxCalls bounds the rubric judge's calls over the run, within
	// the run's budget; 0 is no bound of its own.
	JudgeMaxCalls int   `json:"judge_max_calls,omitempty"`
	Spent         Spend `json:"spent"`
}

// Spend is what LLM calls spent: of a run, or of one activity.
type Spend struct {
	Usage llm.Usage `json:"usage"`
	// Calls counts the calls that reached the run's meter.
	Calls int `json:"calls"`
	// JudgeCalls counts those of the rubric judge, which
	// [Allowance].JudgeMaxCalls bounds.
	JudgeCalls int `json:"judge_calls,omitempty"`
}

// add is s with t added.
func (s Spend) add(t Spend) Spend {
	return Spend{Usage: s.Usage.Add(t.Usage), Calls: s.Calls + t.Calls, JudgeCalls: s.JudgeCalls + t.JudgeCalls}
}

// meter is c under the run's budget, charged with what the run spent; nil
// when b or c is.
func (b *Allowance) meter(c llm.Client) *llm.Meter {
	if b == nil || c == nil {
		return nil
	}
	m := llm.NewMeter(c, llm.Budget{MaxTokens: b.MaxTokens, MaxCalls: b.MaxCalls})
	m.Charge(b.Spent.Usage, b.Spent.Calls)
	return m
}

// judgeMeter is run, the run's meter, under the judge's own bound of
// calls, charged with the judge's calls so far; run itself when there is
// no such bound.
func (b *Allowance) judgeMeter(run *llm.Meter) *llm.Meter {
	if b.JudgeMaxCalls <= 0 {
		return run
	}
	m := llm.NewMeter(run, llm.Budget{MaxCalls: b.JudgeMaxCalls})
	m.Charge(llm.Usage{}, b.Spent.JudgeCalls)
	return m
}

// spent is what the activity spent through run (and judge, the judge's
// meter, when it has one): the meters' counts less the charge; nil
// without a meter.
func (b *Allowance) spent(run, judge *llm.Meter) *Spend {
	if run == nil {
		return nil
	}
	u := run.Usage()
	s := &Spend{
		Usage: llm.Usage{PromptTokens: u.PromptTokens - b.Spent.Usage.PromptTokens, CompletionTokens: u.CompletionTokens - b.Spent.Usage.CompletionTokens},
		Calls: run.Calls() - b.Spent.Calls,
	}
	if judge != nil && judge != run {
		s.JudgeCalls = judge.Calls() - b.Spent.JudgeCalls
	}
	return s
}

// exhausted reports whether the run's budget refuses any further call.
func (b *Allowance) exhausted() bool {
	return b != nil && (b.MaxTokens > 0 && b.Spent.Usage.Total() >= b.MaxTokens || b.MaxCalls > 0 && b.Spent.Calls >= b.MaxCalls)
}

// refused is the error of an LLM agent's attempt made once the run's
// budget is spent: in process, the agent's first model call is refused
// by the run's meter, and the agent says so.
func (b *Allowance) refused() error {
	_, err := b.meter(refuseAll{}).Complete(context.Background(), llm.Request{})
	return fmt.Errorf("llm agent: model call 1: %w", err)
}

// refuseAll stands for the LLM behind a meter that refuses every call.
type refuseAll struct{}

func (refuseAll) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, fmt.Errorf("%w: spent", llm.ErrBudgetExceeded)
}

// allowance is the run's budget as the next activity starts. It is
// given even when the spec sets none, so that the run's usage counts
// every call of the workers' LLM, as the run's meter does in process.
func (f *flow) allowance() *Allowance {
	b := f.in.Spec.Budget
	a := &Allowance{MaxTokens: b.MaxTokens, MaxCalls: b.MaxCalls, Spent: f.spent}
	if j := f.in.Spec.Judge; j != nil {
		a.JudgeMaxCalls = j.MaxCalls
	}
	return a
}

// charge adds what an activity spent to the run's spending.
func (f *flow) charge(s *Spend) {
	if s != nil {
		f.spent = f.spent.add(*s)
	}
}

// Usage and Calls make the run's spending the executor's meter.
func (f *flow) Usage() llm.Usage { return f.spent.Usage }

func (f *flow) Calls() int { return f.spent.Calls }
