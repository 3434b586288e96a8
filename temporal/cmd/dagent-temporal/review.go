package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/temporal"
)

type reviewFlags struct {
	conn    connFlags
	output  string
	comment string
}

func newApprove() *cobra.Command {
	var f reviewFlags
	cmd := &cobra.Command{
		Use:   "approve RUN TASK",
		Short: "Approve a human_review task of a run",
		Long: `Approve the human_review task TASK of the run RUN: the run goes on, with the
review done. Its output is the decision, as dagent resume --review
TASK=approve gives it: "approve", or, with --output JSON or --comment C,
the object {"approved": true, "comment": C, "output": JSON}, whose
"output" (when given) becomes the task's output. A decision sent before
the run reaches the review is kept for it; the first decision on a task
stands. The command returns once the run holds the decision; it exits 2,
and the run goes on as it was, when TASK is no human_review task of the
run's current plan or is decided already.`,
		Example: `  dagent-temporal approve nightly-2025-01-01 review
  dagent-temporal approve nightly-2025-01-01 review --output '{"publish": true}' --comment "checked the totals"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decide(cmd, f, args[0], args[1], true)
		},
	}
	f.conn.register(cmd)
	cmd.Flags().StringVar(&f.output, "output", "", "the task's output, a `JSON` value")
	cmd.Flags().StringVar(&f.comment, "comment", "", "the reviewer's comment")
	return cmd
}

func newReject() *cobra.Command {
	var f reviewFlags
	cmd := &cobra.Command{
		Use:   "reject RUN TASK",
		Short: "Reject a human_review task of a run",
		Long: `Reject the human_review task TASK of the run RUN, as dagent resume --review
TASK=reject does: the task fails, and its on_failure policy decides what
follows (skip, stop, replan). --comment C gives the reviewer's reason.
It exits 2, and the run goes on as it was, when TASK is no human_review
task of the run's current plan or is decided already.`,
		Example: `  dagent-temporal reject nightly-2025-01-01 review --comment "the totals are off"`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decide(cmd, f, args[0], args[1], false)
		},
	}
	f.conn.register(cmd)
	cmd.Flags().StringVar(&f.comment, "comment", "", "the reviewer's comment")
	return cmd
}

// decide sends the decision the flags describe. It reads as dagent
// resume's --review and --reviews read decisions ([runner.ParseDecision]):
// the word alone, or an object once a comment or an output is given.
func decide(cmd *cobra.Command, f reviewFlags, runID, taskID string, approved bool) error {
	var v any = "reject"
	if approved {
		v = "approve"
	}
	if f.output != "" || f.comment != "" {
		obj := map[string]any{"approved": approved}
		if f.comment != "" {
			obj["comment"] = f.comment
		}
		if f.output != "" {
			out, err := jsonv.DecodeBytes([]byte(f.output))
			if err != nil {
				return fmt.Errorf("--output: %w", err)
			}
			obj["output"] = out
		}
		v = obj
	}
	d, err := runner.ParseDecision(v)
	if err != nil {
		return err
	}
	c, err := f.conn.dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := temporal.Decide(cmd.Context(), c, runID, taskID, d); err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	word := "rejected"
	if approved {
		word = "approved"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "run %s: review %s %s\n", runID, taskID, word)
	return nil
}
