package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// wordCount is a catalog of one worker, wc, that counts the words of its
// input.
func wordCount() *registry.Registry {
	reg := registry.New()
	_ = reg.Register("wc", registry.Worker{
		Description: "Counts the words of its input",
		Outputs:     []string{"words"},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input))}}, nil
		}),
	})
	return reg
}

// WithRegistry gives the execution the host's catalog once: plans are
// checked against it and run on its workers. A plan that names a worker
// the catalog does not have is refused before anything runs.
func ExampleWithRegistry() {
	reg := wordCount()
	for _, src := range []string{
		`{"tasks": [{"id": "count", "agent": "wc", "input": "one two three"}]}`,
		`{"tasks": [{"id": "count", "agent": "wordcount", "input": "one two three"}]}`,
	} {
		p, err := plan.Parse([]byte(src))
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := executor.Execute(context.Background(), p, "Count the words", executor.WithRegistry(reg))
		var refused *executor.RefusedError
		if errors.As(err, &refused) {
			fmt.Println("refused:", refused.Report.Issues[0].Check)
			continue
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Status, res.Outputs()["count"])
	}
	// Output:
	// completed map[words:3]
	// refused: unknown_worker
}

// WithPredicates shares one compilation of each predicate between the
// planner that reviewed the plan and the execution that runs it.
func ExampleWithPredicates() {
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: `{"route": "plan", "plan": {"tasks": [
			{"id": "count", "agent": "wc", "input": "one two three", "verification": "(> (get data/result \"words\") 0)"}]}}`}}, nil
	})
	reg := wordCount()
	predicates := verify.NewSet()
	planner := metaplanner.New(model, metaplanner.WithRegistry(reg), metaplanner.WithPredicates(predicates))
	planned, err := planner.Plan(context.Background(), "Count the words of 'one two three'")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := executor.Execute(context.Background(), planned.Plan, "Count the words of 'one two three'",
		executor.WithRegistry(reg), executor.WithPredicates(predicates), executor.WithReplanner(planner))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Outputs()["count"], predicates.Len(), "compilation")
	// Output: completed map[words:3] 1 compilation
}

// WithGate sets how strict the critic is. By default it refuses only a
// plan that cannot run as written; at critic.GateWarning it refuses one it
// has warnings about too, such as a synthesis gate with nothing to combine.
func ExampleWithGate() {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "sum", "type": "synthesis_gate", "input": "Sum up"}]}`))
	if err != nil {
		panic(err)
	}
	echo := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: "the sum of everything"}, nil
	})
	for _, g := range []critic.Gate{critic.GateCritical, critic.GateWarning} {
		res, err := executor.Execute(context.Background(), p, "sum up", executor.WithAgent(plan.DefaultAgent, echo), executor.WithGate(g))
		if err != nil {
			fmt.Printf("%s: %v\n", g, err)
			continue
		}
		fmt.Printf("%s: %s\n", g, res.Status)
	}
	// Output:
	// critical: completed
	// warning: plan refused by the critic at gate warning: 1 issue; warning: task sum: depends_on: the synthesis gate has no dependencies, so it has nothing to synthesize [gate_without_inputs]
}

// replanWith is a replanner that answers every failure with src.
type replanWith string

func (r replanWith) Repair(ctx context.Context, mission string, completed map[string]any, f executor.Failure, h []executor.Trial) (*executor.Repair, error) {
	p, err := plan.Parse([]byte(r))
	return &executor.Repair{Plan: p}, err
}

// WithMaxFlakyStreak stops replanning when the tasks that finished last
// each passed only on a retry: the worker, not the plan, is at fault.
func ExampleWithMaxFlakyStreak() {
	calls := map[string]int{}
	flaky := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		calls[req.TaskID]++
		if req.TaskID == "publish" || calls[req.TaskID] == 1 {
			return agent.Result{}, errors.New("connection reset")
		}
		return agent.Result{Output: "ok"}, nil
	})
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "fetch", "input": "fetch", "on_failure": "retry", "max_retries": 2},
		{"id": "parse", "input": "parse", "on_failure": "retry", "max_retries": 2, "depends_on": ["fetch"]},
		{"id": "publish", "input": "publish", "on_failure": "replan", "depends_on": ["parse"]}]}`))
	if err != nil {
		panic(err)
	}
	res, err := executor.Execute(context.Background(), p, "publish the data",
		executor.WithAgent(plan.DefaultAgent, flaky), executor.WithReplanner(replanWith(`{"tasks": [{"id": "post", "input": "post"}]}`)),
		executor.WithRunner(runner.WithBackoff(runner.Backoff{})), executor.WithMaxFlakyStreak(2))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Halt, res.ReplanCount)
	// Output: failed flaky_streak 0
}

// WithMaxPlanGrowth refuses to run a repair that adds more tasks than
// the bound to the plan the execution started with.
func ExampleWithMaxPlanGrowth() {
	fails := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("timeout")
	})
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "build", "input": "build", "on_failure": "replan"}]}`))
	if err != nil {
		panic(err)
	}
	repair := replanWith(`{"tasks": [
		{"id": "clean", "input": "clean"}, {"id": "deps", "input": "deps"},
		{"id": "build2", "input": "build", "depends_on": ["clean", "deps"]}]}`)
	res, err := executor.Execute(context.Background(), p, "build it",
		executor.WithAgent(plan.DefaultAgent, fails), executor.WithReplanner(repair), executor.WithMaxPlanGrowth(1))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Halt)
	fmt.Println(res.Err)
	// Output:
	// failed plan_growth
	// replanning halted (plan_growth): task build failed and its repair grew too much: the repair plan has 3 tasks, 2 more than the first plan; at most 1 more are allowed
}
