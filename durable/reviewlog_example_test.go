package durable_test

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// The journal records who decided a review, and what.
func ExampleWithReviewer() {
	s, done := journal()
	defer done()
	p, _ := plan.Parse([]byte(`{"tasks": [
		{"id": "draft", "agent": "upper", "input": "hello"},
		{"id": "approve", "type": "human_review", "input": "Send it?", "depends_on": ["draft"]}]}`))
	ctx := context.Background()
	durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("upper", upper), durable.WithRunID("r1"))

	out, _ := durable.Resume(ctx, s, "r1", durable.WithAgent("upper", upper), durable.WithReviewer("Ada"),
		durable.WithReviews(map[string]runner.Decision{"approve": {Approved: true, Comment: "good"}}))
	fmt.Println(out.Status)
	r, _ := durable.Load(ctx, s, "r1")
	for _, e := range r.Record.Events {
		if d, ok := durable.DecisionOf(e); ok {
			fmt.Printf("%s: approved %t by %s: %s\n", e.TaskID, d.Approved, d.By, d.Comment)
			fmt.Printf("%s: %s\n", e.TaskID, d)
		}
	}
	// Output:
	// completed
	// approve: approved true by Ada: good
	// approve: approved by Ada: good
}
