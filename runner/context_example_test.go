package runner_test

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// traceKey is the context key of the example's trace label.
type traceKey struct{}

// tracer labels the contexts of a run and of its attempts, as a tracer
// puts its spans there.
type tracer struct{}

func (tracer) Observe(runner.Event) {}

func (tracer) Context(ctx context.Context, e runner.Event) context.Context {
	if e.Kind == runner.EventRunStarted {
		return context.WithValue(ctx, traceKey{}, "run "+e.RunID)
	}
	return context.WithValue(ctx, traceKey{}, fmt.Sprintf("%s / task %s / attempt %d", ctx.Value(traceKey{}), e.TaskID, e.Attempt))
}

// An observer that is a ContextObserver gives the agents the contexts it
// makes: what an agent calls finds the attempt it belongs to.
func ExampleContextObserver() {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "fetch", "agent": "w", "input": "x"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := agent.Func(func(ctx context.Context, _ agent.Request) (agent.Result, error) {
		return agent.Result{Output: ctx.Value(traceKey{})}, nil
	})
	res, err := runner.New(runner.WithAgent("w", w), runner.WithObserver(tracer{})).RunPlan(context.Background(), p, runner.WithRunID("r1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Tasks["fetch"].Output)
	// Output:
	// run r1 / task fetch / attempt 1
}
