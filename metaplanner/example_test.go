package metaplanner_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
)

// Example shows a plan corrected once: the model's first plan has a cycle,
// the critic's finding goes back to it, and its second plan is accepted.
func Example() {
	answers := []string{
		`{"route": "plan", "plan": {"tasks": [
			{"id": "fetch", "input": "List this week's GNN papers", "depends_on": ["digest"]},
			{"id": "digest", "input": "Summarise {{results.fetch}}", "depends_on": ["fetch"]}]}}`,
		`{"route": "plan", "plan": {"tasks": [
			{"id": "fetch", "input": "List this week's GNN papers", "on_failure": "retry",
			 "verification": "(> (count data/result) 0)"},
			{"id": "digest", "input": "Summarise {{results.fetch}}", "depends_on": ["fetch"]}]}}`,
	}
	calls := 0
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if calls > 0 {
			// The feedback is the last message of the conversation.
			fmt.Println(strings.Split(req.Messages[len(req.Messages)-1].Content, "\n")[2])
		}
		content := answers[calls]
		calls++
		return llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: content},
			Usage:   llm.Usage{PromptTokens: 1500, CompletionTokens: 120},
		}, nil
	})

	res, err := metaplanner.New(model).Plan(context.Background(), "Digest this week's GNN papers")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Route, "after", res.Attempts, "attempts,", res.Usage.Total(), "tokens")
	for _, t := range res.Plan.Tasks {
		fmt.Println(t.ID, t.DependsOn)
	}
	// Output:
	// 1. task "fetch", field depends_on: dependency cycle: fetch -> digest -> fetch [cycle]
	// plan after 2 attempts, 3240 tokens
	// fetch []
	// digest [fetch]
}

// ExamplePlanner_Replan asks for a repair after the task digest failed its
// predicate; the completed task fetch is kept and reused.
func ExamplePlanner_Replan() {
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Content: `{"route": "plan", "plan": {"tasks": [
			{"id": "fetch", "input": "List this week's GNN papers"},
			{"id": "digest_short", "input": "Summarise each paper in one sentence: {{results.fetch}}", "depends_on": ["fetch"],
			 "verification": "(<= (count data/result) 2000)"}]}}`}}, nil
	})
	res, err := metaplanner.New(model).Replan(context.Background(), "Digest this week's GNN papers",
		map[string]any{"fetch": []any{"GNNs at scale", "Graph transformers"}},
		metaplanner.Failure{TaskID: "digest", Class: "verification_failed", Diagnosis: "the digest is over 2000 characters"},
		[]metaplanner.Trial{{Attempt: 1, TaskID: "digest", Class: "timeout", Diagnosis: "timed out after 30s", NewTaskCount: 1}})
	if err != nil {
		panic(err)
	}
	for _, t := range res.Plan.Tasks {
		fmt.Println(t.ID, t.DependsOn)
	}
	// Output:
	// fetch []
	// digest_short [fetch]
}

// ExamplePlanner_Repair is Replan as an executor asks for it: the
// accepted repair plan and the tokens spent. A Planner is given to an
// execution with executor.WithReplanner.
func ExamplePlanner_Repair() {
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Content: `{"route": "plan", "plan": {"tasks": [
			{"id": "fetch", "input": "List this week's GNN papers"},
			{"id": "digest_short", "input": "Summarise each paper in one sentence: {{results.fetch}}", "depends_on": ["fetch"]}]}}`},
			Usage: llm.Usage{PromptTokens: 900, CompletionTokens: 80}}, nil
	})
	var replanner executor.Replanner = metaplanner.New(model)
	rep, err := replanner.Repair(context.Background(), "Digest this week's GNN papers",
		map[string]any{"fetch": []any{"GNNs at scale", "Graph transformers"}},
		executor.Failure{TaskID: "digest", Class: "timeout", Diagnosis: "timed out after 30s"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(rep.Plan.Tasks), "tasks,", rep.Usage.Total(), "tokens")
	// Output: 2 tasks, 980 tokens
}
