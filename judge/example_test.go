package judge_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// model stands in for an LLM: it fails an output that names no source and
// passes any other.
var model = llm.ClientFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
	answer := `{"pass": true, "reason": "names its source"}`
	if !strings.Contains(req.Messages[1].Content, "source:") {
		answer = `{"pass": false, "reason": "the summary names no source"}`
	}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: answer}, Usage: llm.Usage{PromptTokens: 50, CompletionTokens: 10}}, nil
})

// A judge checks a task's rubric once its predicate passes; a failed
// judgement is retried with the judge's reason as the diagnosis. The
// meter bounds and counts the judge's calls.
func ExampleJudge() {
	writer := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		if req.Diagnosis != "" {
			return agent.Result{Output: "Sales rose 4%. source: Q3 report"}, nil
		}
		return agent.Result{Output: "Sales rose 4%."}, nil
	})
	tk := plan.NewTask("summary", "Summarise the quarter.")
	tk.Agent = "writer"
	tk.Verification = `(> (count data/result) 0)`
	tk.Rubric = "The summary names its source."

	meter := llm.NewMeter(model, llm.Budget{MaxCalls: 5})
	rn := runner.New(runner.WithAgent("writer", writer), runner.WithJudge(judge.New(meter)), runner.WithBackoff(runner.Backoff{}))
	res, err := rn.RunPlan(context.Background(), &plan.Plan{Tasks: []plan.Task{tk}})
	if err != nil {
		log.Fatal(err)
	}
	got := res.Tasks["summary"]
	fmt.Println(got.Status, got.Attempts, got.Output)
	fmt.Println("judge calls:", meter.Calls())
	// Output:
	// done 2 Sales rose 4%. source: Q3 report
	// judge calls: 2
}

// A reviewer adds a model's findings to the critic's static ones.
func ExampleReviewer() {
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: `{"issues": [{"severity": "warning", "task_id": "summary",
			"field": "input", "message": "the summary does not say who it is for", "recommendation": "name the audience in the input"}]}`}}, nil
	})
	p := &plan.Plan{Tasks: []plan.Task{plan.NewTask("summary", "Summarise the quarter.")}}
	rep, err := critic.ReviewWith(context.Background(), p, judge.NewReviewer(model))
	if err != nil {
		log.Fatal(err)
	}
	for _, is := range rep.Issues {
		if is.Check == judge.ReviewCheck {
			fmt.Println(is)
		}
	}
	// Output:
	// warning: task summary: input: the summary does not say who it is for [llm_review]
}
