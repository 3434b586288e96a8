package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/temporal"
)

// printPlanned prints the outcome of a run whose planner gave no plan to
// run, as dagent run prints it: the planner's error, with the critical
// findings of its last answer, on standard error (exit 1); its direct
// answer (exit 5) or its question (exit 6) on standard output. As JSON,
// each prints the planning document of dagent plan --format json.
func printPlanned(cmd *cobra.Command, out *temporal.Outcome, format string) error {
	res := out.Planned
	code := exitCode(exitFailed)
	switch {
	case out.PlanError != "":
	case res.Route == metaplanner.RouteSynthesis:
		code = exitAnswered
	case res.Route == metaplanner.RouteClarify:
		code = exitClarify
	}
	if out.PlanError != "" {
		errOut := cmd.ErrOrStderr()
		fmt.Fprintln(errOut, "dagent-temporal:", prose.OneLine(out.PlanError))
		for _, is := range res.Report.Issues {
			if is.Severity.AtLeast(critic.Critical) {
				fmt.Fprintln(errOut, prose.OneLine(is.String()))
			}
		}
	}
	if format == "json" {
		if err := jsonv.EncodeIndent(cmd.OutOrStdout(), out, "  "); err != nil {
			return err
		}
		return code
	}
	text := res.Answer
	if code == exitClarify {
		text = res.Question
	}
	if code != exitFailed {
		if _, err := fmt.Fprintln(cmd.OutOrStdout(), prose.Visible(strings.TrimRight(text, "\n"))); err != nil {
			return err
		}
	}
	return code
}
