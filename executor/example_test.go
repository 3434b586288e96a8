package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Example runs a plan whose digest task fails and asks for a replan; the
// meta-planner (here on a scripted model) writes a repair of the tail, which
// reuses the result of fetch instead of fetching again.
func Example() {
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "fetch", "input": "List this week's GNN papers"},
		{"id": "digest", "input": "Summarise {{results.fetch}}", "depends_on": ["fetch"], "on_failure": "replan"}]}`))
	if err != nil {
		panic(err)
	}

	// The Go agent that does the work: digest fails, the repair's
	// digest_short succeeds.
	work := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		switch req.TaskID {
		case "fetch":
			return agent.Result{Output: "GNNs at scale; Graph transformers"}, nil
		case "digest":
			return agent.Result{}, errors.New("the digest is over 2000 characters")
		}
		return agent.Result{Output: "2 papers: " + req.Input}, nil
	})

	// The model behind the meta-planner answers with a repair plan.
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: `{"route": "plan", "plan": {"tasks": [
				{"id": "fetch", "input": "List this week's GNN papers"},
				{"id": "digest_short", "input": "One line each: {{results.fetch}}", "depends_on": ["fetch"]}]}}`},
			Usage: llm.Usage{PromptTokens: 900, CompletionTokens: 80},
		}, nil
	})

	res, err := executor.Execute(context.Background(), p, "Digest this week's GNN papers",
		executor.WithRunner(runner.WithAgent(plan.DefaultAgent, work)),
		executor.WithReplanner(metaplanner.New(model)),
	)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, "after", res.ReplanCount, "replan,", res.ExecutionAttempts, "executions,", res.Usage.Total(), "tokens")
	for _, t := range res.History {
		fmt.Printf("repair %d: task %s failed (%s): %s; %d new task\n", t.Attempt, t.TaskID, t.Class, t.Diagnosis, t.NewTaskCount)
	}
	out := res.Outputs()
	for _, id := range slices.Sorted(maps.Keys(out)) {
		fmt.Printf("%s: %v\n", id, out[id])
	}
	// Output:
	// completed after 1 replan, 2 executions, 980 tokens
	// repair 1: task digest failed (agent_error): the digest is over 2000 characters; 1 new task
	// digest_short: 2 papers: One line each: GNNs at scale; Graph transformers
	// fetch: GNNs at scale; Graph transformers
}

// An execution's result marshals to a run's JSON form followed by what
// replanning adds.
func ExampleResult_MarshalJSON() {
	res := executor.Result{
		Result: runner.Result{
			RunID: "r1", Status: runner.StatusFailed, Err: errors.New("task a: boom"),
			Tasks: map[string]*runner.TaskResult{"a": {Status: runner.TaskFailed, Attempts: 1, Err: errors.New("boom")}},
		},
		ReplanCount: 2, ExecutionAttempts: 3, Halt: executor.HaltMaxReplans,
	}
	b, err := json.Marshal(res)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"version":1,"run_id":"r1","status":"failed","error":"task a: boom","duration_ms":0,"tasks":{"a":{"status":"failed","attempts":1,"output":null,"error":"boom","diagnosis":"","duration_ms":0}},"pending_reviews":[],"replan":null,"replan_count":2,"execution_attempts":3,"usage":{"prompt_tokens":0,"completion_tokens":0},"replan_history":[],"halt":"max_replans","plan":null}
}
