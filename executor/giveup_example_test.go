package executor_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// A replanner that finds no repair gives up with its reason: the
// execution halts cleanly with gave_up.
func ExampleGaveUpError() {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "fetch", "input": "Fetch the report", "on_failure": "replan"}]}`))
	if err != nil {
		panic(err)
	}
	work := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("410 Gone")
	})
	giveUp := executor.ReplannerFunc(func(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
		return &executor.Repair{GaveUp: true, Reason: "the report was withdrawn"}, nil
	})
	res, err := executor.Execute(context.Background(), p, "Summarise the report",
		executor.WithRunner(runner.WithAgent(plan.DefaultAgent, work)), executor.WithReplanner(giveUp))
	if err != nil {
		panic(err)
	}
	var gu *executor.GaveUpError
	fmt.Println(res.Status, res.Halt, errors.As(res.Err, &gu), gu.Reason)
	// Output:
	// failed gave_up true the report was withdrawn
}
