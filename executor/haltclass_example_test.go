package executor_test

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// A failure of a class that halts ends the execution without asking the
// replanner: tool_refused and precondition_failed by default, and any
// class WithHaltOn names, here one a worker reports.
func ExampleWithHaltOn() {
	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "build", "input": "make", "on_failure": "replan"}]}`))
	build := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{}, &agent.FailureReport{Class: "sandbox_violation", Message: "wrote outside its directory"}
	})
	never := executor.ReplannerFunc(func(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
		panic("not asked")
	})
	res, _ := executor.Execute(context.Background(), p, "build it",
		executor.WithAgent(plan.DefaultAgent, build),
		executor.WithReplanner(never),
		executor.WithHaltOn("sandbox_violation"),
		executor.WithoutHaltOn(runner.ClassPrecondition))
	fmt.Println(res.Status, res.Halt)
	fmt.Println(res.Err)
	// Output:
	// failed sandbox_violation
	// replanning halted (sandbox_violation): task build failed with class sandbox_violation, which halts the execution: sandbox_violation: wrote outside its directory
}
