package plan_test

import (
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/plan"
)

// A plan built in Go starts from NewTask, so that it has the defaults Parse
// gives a task the model wrote.
func ExampleNewTask() {
	fetch := plan.NewTask("fetch", "Download the sales data")
	fetch.OnFailure = plan.PolicyRetry
	report := plan.NewTask("report", "Write up {{results.fetch}}")
	report.DependsOn = []string{"fetch"}
	p := &plan.Plan{Tasks: []plan.Task{fetch, report}}

	fmt.Println(report.Agent, report.Type, report.OnFailure, report.Critical, report.MaxRetries)
	fmt.Println(p.Validate())

	// The zero Task has none of them.
	p.Tasks = append(p.Tasks, plan.Task{ID: "bare"})
	for _, pr := range plan.Problems(p.Validate()) {
		fmt.Println(pr.Code)
	}
	// Output:
	// default task stop true 2
	// <nil>
	// unknown_agent
	// invalid_type
	// invalid_on_failure
	// invalid_on_verification_failure
}

// WithWorkerOutputs declares the slots of a worker's output, so that a task
// wiring a slot the worker does not have is caught before anything runs.
func ExampleWithWorkerOutputs() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "scrape", "agent": "scraper", "input": "Collect this week's papers"},
  {"id": "digest", "input": "Summarise the papers",
   "inputs": {"papers": {"from": "scrape", "slot": "links.0"}}, "depends_on": ["scrape"]}
]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = p.Validate(plan.WithWorkerOutputs("scraper", "items", "count"))
	fmt.Println(err)
	// Output:
	// task digest: inputs.papers: input "papers" reads slot "links" of "scrape", but worker "scraper" declares items, count [undeclared_slot]
}

// WithLimits bounds what a plan may ask for; a zero field keeps its
// default, a negative one means no limit.
func ExampleWithLimits() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "a", "input": "One", "max_retries": 5},
  {"id": "b", "input": "Two"},
  {"id": "c", "input": "Three"}
]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = p.Validate(plan.WithLimits(plan.Limits{MaxTasks: 2, MaxRetries: 3}))
	fmt.Println(errors.Is(err, plan.ErrInvalid))
	for _, pr := range plan.Problems(err) {
		fmt.Println(pr.Code)
	}
	// Output:
	// true
	// too_many_tasks
	// too_many_retries
}

// ResultRefs finds the {{results...}} templates of an input; an id may hold
// dots, so the longest id the plan has wins.
func ExampleResultRefs() {
	ids := map[string]bool{"fetch": true, "1.2": true}
	input := "Compare {{results.fetch.items.0}} with {{results.1.2}}; {{name}} stays."
	for ref := range plan.ResultRefs(input, func(id string) bool { return ids[id] }) {
		fmt.Printf("%q task %q path %q\n", input[ref.Start:ref.End], ref.Task, ref.Path)
	}
	// Output:
	// "{{results.fetch.items.0}}" task "fetch" path "items.0"
	// "{{results.1.2}}" task "1.2" path ""
}
