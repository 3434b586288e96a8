package critic_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

func ExampleReview() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "fetch", "input": "Search the web for this week's papers"},
  {"id": "digest", "input": "Write a digest", "depends_on": ["fetch"]}
]}`))
	if err != nil {
		panic(err)
	}
	rep := critic.Review(p)
	for _, is := range rep.Issues {
		fmt.Println(is.Pos, is)
	}
	fmt.Println(rep.Score, rep.Summary)
	for _, r := range rep.Recommendations {
		fmt.Println("-", r)
	}
	// Output:
	// 2:3 warning: task fetch: on_failure: the task's input describes a flaky operation ("search"), yet one failure halts the run [optimism_bias]
	// 3:3 warning: task digest: depends_on: the input uses none of the task's dependencies (fetch) [disconnected_flow]
	// 8 The plan is acceptable, with minor issues.
	// - Let flaky operations retry (on_failure: retry with max_retries), or make them non-critical.
	// - Use what a task depends on: {{results.ID}} in its input or inputs wiring; drop dependencies it does not need.
}

func ExampleReviewSource() {
	reply := "Here is the plan:\n```json\n" + `{"steps": [
  {"id": "a", "action": "Draft the notes"},
  {"id": "b", "action": "Edit {{results.a}}", "after": "a", "agent": "editor"}
]}` + "\n```"
	rep := critic.ReviewSource([]byte(reply))
	for _, is := range rep.Issues {
		fmt.Println(is.Pos, is)
	}
	fmt.Println(rep.Score, rep.Has(critic.Critical))

	rep = critic.ReviewSource([]byte("I would draft the notes first."))
	fmt.Println(rep.Issues[0])
	// Output:
	// 5:3 critical: task b: agent: agent "editor" is not defined in the plan's agents and is not a registry worker [unknown_agent]
	// 7 true
	// critical: plan: no JSON object found: expected a plan object such as {"tasks": [...]} [no_json]
}

// lengthReviewer stands in for an LLM: it flags inputs of fewer than three
// words.
type lengthReviewer struct{}

func (lengthReviewer) Review(_ context.Context, p *plan.Plan, static critic.Report) ([]critic.Issue, error) {
	var out []critic.Issue
	for _, t := range p.Tasks {
		if len(strings.Fields(t.Input)) < 3 {
			out = append(out, critic.Issue{Check: "vague_input", Severity: critic.Warning, TaskID: t.ID, Field: "input",
				Message: "the input is too short to act on", Recommendation: "Say what the task must produce."})
		}
	}
	return out, nil
}

func ExampleReviewWith() {
	p := &plan.Plan{Tasks: []plan.Task{
		plan.NewTask("outline", "Outline"),
		plan.NewTask("write", "Write the article from {{results.outline}}"),
	}}
	p.Tasks[1].DependsOn = []string{"outline"}
	p.Tasks[1].Verification = "(count data/result)"

	rep, err := critic.ReviewWith(context.Background(), p, lengthReviewer{})
	if err != nil {
		panic(err)
	}
	for _, is := range rep.Issues {
		fmt.Println(is)
	}
	fmt.Println(rep.Score, rep.Summary)
	// Output:
	// warning: task outline: input: the input is too short to act on [vague_input]
	// warning: task write: verification: the predicate can never pass: 1:1: never passes: the predicate always returns a number, but it must return true, false or a diagnosis string [predicate_never_passes]
	// 8 The plan is acceptable, with minor issues.
}

func ExampleReviewDAG() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "fetch", "input": "List the open issues", "verification": "(> (count data/result) 0)"},
  {"id": "digest", "input": "Summarise {{results.fetch}}", "depends_on": ["fetch"],
   "verification": "(> (count data/result) 0)"}
]}`))
	if err != nil {
		panic(err)
	}
	// Check the plan once; the critic and the runner both take the result,
	// and share one compilation of each distinct predicate.
	d, err := p.DAG()
	if err != nil {
		panic(err)
	}
	predicates := verify.NewSet()
	rep := critic.ReviewDAG(d, critic.WithPredicates(predicates))
	fmt.Println(rep.Score, len(rep.Issues), predicates.Len())
	// Output:
	// 10 0 1
}

// catalog stands in for the host's registry: one worker, scraper, whose
// output has the slots items and count, and one tool, search.
type catalog struct{}

func (catalog) WorkerOutputs(name string) ([]string, bool) {
	if name == "scraper" {
		return []string{"items", "count"}, true
	}
	return nil, false
}

func (catalog) HasTool(name string) bool { return name == "search" }

// WithCatalog checks a plan against what the host offers: the workers tasks
// name, the slots wired from them, and the tools of the plan's agents. A
// *registry.Registry is a catalog.
func ExampleWithCatalog() {
	p, err := plan.Parse([]byte(`{
  "agents": {"writer": {"prompt": "You write digests.", "tools": ["browse"]}},
  "tasks": [
    {"id": "scrape", "agent": "scraper", "input": "Collect this week's papers"},
    {"id": "digest", "agent": "writer", "input": "Summarise the papers",
     "inputs": {"papers": {"from": "scrape", "slot": "links"}}, "depends_on": ["scrape"]}
  ]}`))
	if err != nil {
		panic(err)
	}
	rep := critic.Review(p, critic.WithCatalog(catalog{}))
	for _, is := range rep.Issues {
		if is.Severity == critic.Critical {
			fmt.Println(is)
		}
	}
	// Output:
	// critical: plan: agents.writer.tools: agent "writer" uses tool "browse", which the host's catalog does not have [unknown_tool]
	// critical: task digest: inputs.papers: input "papers" reads slot "links" of "scrape", but worker "scraper" declares items, count [undeclared_slot]
}

// Describe says what a check reported by the critic means and how to fix
// its issues, as SARIF viewers and the CLI's explanations show it.
func ExampleDescribe() {
	r, ok := critic.Describe("cycle")
	fmt.Println(ok, r.Severity, r.Category)
	fmt.Println(r.Title)
	// Output:
	// true critical structure
	// The dependencies form a cycle
}

func ExampleGate() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "find", "input": "Search the web for this week's papers"},
  {"id": "digest", "input": "Write a digest of {{results.find}}", "depends_on": ["find"]}
]}`))
	if err != nil {
		panic(err)
	}
	rep := critic.Review(p)
	for _, s := range []string{"never", "critical", "warning"} {
		g, err := critic.ParseGate(s)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: refuses %v\n", g, g.Refuses(&rep))
	}
	// Output:
	// never: refuses false
	// critical: refuses false
	// warning: refuses true
}

func ExampleReport_Without() {
	rep := critic.ReviewSource([]byte(`{"tasks": [{"id": "a", "agent": "crawler", "input": "List the files of the repository"}]}`))
	quiet := rep.Without(func(is critic.Issue) bool { return is.Check == "unknown_agent" })
	fmt.Println(len(rep.Issues), len(quiet.Issues), quiet.Summary)
	// Output:
	// 1 0 The plan looks good: no issues found.
}

// Merge adds a reviewer's findings to a report made otherwise, here of a
// plan's source text.
func ExampleMerge() {
	src := []byte(`{"tasks": [{"id": "summary", "input": "Summarise the quarter."}]}`)
	rep := critic.ReviewSource(src)
	p, _ := plan.Parse(src)
	rep = critic.Merge(rep, p, []critic.Issue{{Check: "llm_review", Severity: critic.Warning, TaskID: "summary", Message: "the summary names no audience"}})
	fmt.Println(rep.Issues[len(rep.Issues)-1])
	// Output:
	// warning: task summary: the summary names no audience [llm_review]
}
