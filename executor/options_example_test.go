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
