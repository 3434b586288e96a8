package durable

import (
	"context"
	"sync"

	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

// lazyJudge is the judge of a run's rubrics, on the run's LLM: asked for
// the first time a task with a rubric passes its predicate, so that a run
// whose plan has no rubric never needs an LLM for it.
type lazyJudge struct {
	l    *launch
	spec JudgeSpec

	once sync.Once
	j    *judge.Judge
	err  error
}

func (z *lazyJudge) Judge(ctx context.Context, req runner.JudgeRequest) (runner.Verdict, error) {
	z.once.Do(func() {
		var c llm.Client
		c, z.err = z.l.llm.client(z.spec.Model == "")
		if z.err != nil {
			return
		}
		if z.spec.MaxCalls > 0 {
			// Under the run's meter's budget, and under its own.
			c = llm.NewMeter(c, llm.Budget{MaxCalls: z.spec.MaxCalls})
		}
		z.j = judge.New(c, judge.WithModel(z.spec.Model))
	})
	if z.err != nil {
		return runner.Verdict{}, z.err
	}
	return z.j.Judge(ctx, req)
}
