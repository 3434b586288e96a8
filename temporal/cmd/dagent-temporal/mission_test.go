package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/temporal"
)

// TestPrintPlanned: a run whose planner gave no plan to run prints and
// exits as dagent run does.
func TestPrintPlanned(t *testing.T) {
	tests := []struct {
		name           string
		out            temporal.Outcome
		format         string
		code           int
		stdout, stderr string
	}{
		{"answer", temporal.Outcome{Planned: &metaplanner.Result{Route: metaplanner.RouteSynthesis, Answer: "42\x1b[2J\n"}}, "text", exitAnswered, "42\\u001b[2J\n", ""},
		{"question", temporal.Outcome{Planned: &metaplanner.Result{Route: metaplanner.RouteClarify, Question: "which week?"}}, "text", exitClarify, "which week?\n", ""},
		{"no valid plan", temporal.Outcome{Planned: &metaplanner.Result{Route: metaplanner.RoutePlan, Report: critic.Report{Issues: []critic.Issue{
			{Severity: critic.Critical, Message: "a and b wait for each other"}}}}, PlanError: "metaplanner: no valid plan"},
			"text", exitFailed, "", "dagent-temporal: metaplanner: no valid plan\ncritical: plan: a and b wait for each other"},
		{"answer as JSON", temporal.Outcome{Planned: &metaplanner.Result{Route: metaplanner.RouteSynthesis, Answer: "42"}}, "json", exitAnswered, `"answer": "42"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := &cobra.Command{}
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err := printOutcome(cmd, &tt.out, tt.format)
			var code exitCode
			assert.True(t, errors.As(err, &code), err)
			assert.Equal(t, tt.code, int(code))
			assert.Contains(t, out.String(), tt.stdout)
			assert.Contains(t, errOut.String(), tt.stderr)
		})
	}
}
