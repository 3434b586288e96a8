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

// flaky is a plan whose task x fails and asks for a replan, and fixed its
// repair, which keeps the finished a.
const (
	flaky = `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "x", "input": "X", "depends_on": ["a"], "on_failure": "replan"}]}`
	fixed = `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "y", "input": "Y", "depends_on": ["a"]}]}`
)

// work runs every task: x fails, the others answer.
var work = agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
	if req.TaskID == "x" {
		return agent.Result{}, errors.New("the service is down")
	}
	return agent.Result{Output: req.TaskID + " done"}, nil
})

// repairWith is a replanner that answers with the plan src.
func repairWith(src string) executor.Replanner {
	return executor.ReplannerFunc(func(ctx context.Context, mission string, completed map[string]any, f executor.Failure, history []executor.Trial) (*executor.Repair, error) {
		p, err := plan.Parse([]byte(src))
		return &executor.Repair{Plan: p}, err
	})
}

func mustParse(src string) *plan.Plan {
	p, err := plan.Parse([]byte(src))
	if err != nil {
		panic(err)
	}
	return p
}

// WithObserver sees the events of the runs and, between them, the
// executor's own: the replan it asks for and the repair it adopts.
func ExampleWithObserver() {
	show := runner.ObserverFunc(func(e runner.Event) {
		switch e.Kind {
		case runner.EventRunStarted:
			fmt.Println("run", e.RunID)
		case executor.EventReplanRequested:
			fmt.Printf("replan: %s failed (%s): %s\n", e.TaskID, e.Class, e.Diagnosis)
		case executor.EventRepairAdopted:
			fmt.Printf("repair %d: %d tasks, %d new\n", e.Version, e.Tasks, e.NewTasks)
		}
	})
	res, err := executor.Execute(context.Background(), mustParse(flaky), "Check the service",
		executor.WithAgent(plan.DefaultAgent, work), executor.WithReplanner(repairWith(fixed)),
		executor.WithRunID("check"), executor.WithObserver(show))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status)
	// Output:
	// run check
	// replan: x failed (agent_error): the service is down
	// repair 1: 2 tasks, 1 new
	// run check.1
	// completed
}

// planLog is a Journal that prints what it would make durable.
type planLog struct{}

func (planLog) CommitPlan(ctx context.Context, c executor.PlanCommit) error {
	if c.Trial == nil {
		fmt.Printf("%s v%d: %d tasks\n", c.RunID, c.Version, len(c.Plan.Tasks))
		return nil
	}
	fmt.Printf("%s v%d: %d tasks, after %s failed\n", c.RunID, c.Version, len(c.Plan.Tasks), c.Trial.TaskID)
	return nil
}

// WithJournal commits each plan before it runs: the first, and the
// repair.
func ExampleWithJournal() {
	res, err := executor.Execute(context.Background(), mustParse(flaky), "Check the service",
		executor.WithAgent(plan.DefaultAgent, work), executor.WithReplanner(repairWith(fixed)),
		executor.WithRunID("check"), executor.WithJournal(planLog{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "at version", res.ReplanCount)
	// Output:
	// check v0: 2 tasks
	// check v1: 2 tasks, after x failed
	// completed at version 1
}

// WithHistory and WithInitialResults resume an execution that stopped
// while its first repair ran: the repair runs again under check.1, and a,
// done before, does not.
func ExampleWithHistory() {
	history := []executor.Trial{{Attempt: 1, TaskID: "x", Class: "agent_error", Diagnosis: "the service is down", NewTaskCount: 1}}
	res, err := executor.Execute(context.Background(), mustParse(fixed), "Check the service",
		executor.WithAgent(plan.DefaultAgent, work), executor.WithReplanner(repairWith(fixed)),
		executor.WithRunID("check"),
		executor.WithHistory(history),
		executor.WithInitialResults(map[string]any{"a": "a done"}),
		executor.WithObserver(runner.ObserverFunc(func(e runner.Event) {
			if e.Kind == runner.EventTaskStarted {
				fmt.Println(e.RunID, "runs", e.TaskID)
			}
		})))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, "after", res.ReplanCount, "replan,", res.ExecutionAttempts, "executions")
	// Output:
	// check.1 runs y
	// completed after 1 replan, 2 executions
}

// A halted execution fails with a *HaltError: here the repair fails the
// same way as the plan it replaced.
func ExampleHaltError() {
	res, err := executor.Execute(context.Background(), mustParse(flaky), "Check the service",
		executor.WithAgent(plan.DefaultAgent, work), executor.WithReplanner(repairWith(flaky)))
	if err != nil {
		fmt.Println(err)
		return
	}
	var halted *executor.HaltError
	if errors.As(res.Err, &halted) {
		fmt.Println(res.Status, halted.Halt, halted.Failure.TaskID)
	}
	fmt.Println(errors.Is(res.Err, executor.ErrHalted))
	fmt.Println(res.Err)
	// Output:
	// failed same_failure x
	// true
	// replanning halted (same_failure): task x failed the same way twice: the service is down
}

// A function is a Replanner: here one that drops the failed task.
func ExampleReplannerFunc() {
	drop := executor.ReplannerFunc(func(ctx context.Context, mission string, completed map[string]any, f executor.Failure, history []executor.Trial) (*executor.Repair, error) {
		p := &plan.Plan{Mission: f.Plan.Mission}
		for _, t := range f.Plan.Tasks {
			if t.ID != f.TaskID {
				p.Tasks = append(p.Tasks, t)
			}
		}
		return &executor.Repair{Plan: p}, nil
	})
	res, err := executor.Execute(context.Background(), mustParse(flaky), "Check the service",
		executor.WithAgent(plan.DefaultAgent, work), executor.WithReplanner(drop))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Outputs())
	// Output: completed map[a:a done]
}
