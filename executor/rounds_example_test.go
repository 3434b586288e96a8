package executor_test

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// ExampleExecuteRounds plans in rounds with a Go round planner: one task a
// round, each depending on the one before, until three are completed.
func ExampleExecuteRounds() {
	planner := executor.RoundPlannerFunc(func(_ context.Context, _ string, s executor.RoundState) (*executor.RoundAnswer, error) {
		if len(s.Completed) == 3 {
			return &executor.RoundAnswer{Action: executor.RoundDone, Deliverable: []string{"step3"}}, nil
		}
		t := plan.NewTask(fmt.Sprintf("step%d", s.Round), "count on")
		if s.Round > 1 {
			t.Inputs = map[string]plan.InputRef{"prev": {From: fmt.Sprintf("step%d", s.Round-1)}}
		}
		return &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: []plan.Task{t}}, nil
	})
	count := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		n, _ := req.Inputs["prev"].(int)
		return agent.Result{Output: n + 1}, nil
	})
	res, err := executor.ExecuteRounds(context.Background(), "count to three",
		executor.WithRounds(5, planner), executor.WithRunner(runner.WithAgent(plan.DefaultAgent, count)))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Rounds, res.Tasks["step3"].Output)
	// Output: completed 3 3
}
