package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
)

// A worker's structured failure, as a command writes it before it exits
// with a non-zero status, is read and sanitised by ParseFailureReport.
func ExampleParseFailureReport() {
	out := []byte(`{"error": {"class": "rate_limited", "message": "429 from the API", "suggestion": "retry after a minute"}}`)
	r, ok := agent.ParseFailureReport(out)
	fmt.Println(ok, r.Class)
	fmt.Println(r.Suggestion)
	// Output:
	// true rate_limited
	// retry after a minute
}

// A Go agent reports a structured failure by returning a FailureReport as
// its error, wrapped or not; the runner classifies the task's failure by
// its class.
func ExampleFailureReport() {
	fetch := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{}, fmt.Errorf("fetch: %w", &agent.FailureReport{
			Class: "rate_limited", Message: "429 from the API", Suggestion: "retry after a minute",
		})
	})
	_, err := fetch.Run(context.Background(), agent.Request{TaskID: "fetch", Input: "x", Attempt: 1})
	var r *agent.FailureReport
	fmt.Println(errors.As(err, &r), r.Class)
	fmt.Println(err)
	// Output:
	// true rate_limited
	// fetch: rate_limited: 429 from the API
}
