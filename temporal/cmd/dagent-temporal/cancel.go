package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/temporal"
)

func newCancel() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run",
		Long: `Cancel the run RUN: its running attempts are cancelled, and it ends failed
with the cancellation as its error, every finished task's result kept, as
Ctrl-C ends a local run. dagent-temporal show RUN prints it then.

Exit codes: 0 the cancellation was requested, 1 the run has ended
already (nothing to cancel), 2 usage error, no such run or no
connection.`,
		Example: `  dagent-temporal cancel nightly-2025-01-01`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			// The cluster takes a cancellation of an ended run without a
			// word, so the command asks first.
			if status, ok := endedAs(ctx, c, args[0]); ok {
				msg := fmt.Sprintf("run %s has ended already (%s): nothing to cancel", args[0], status)
				fmt.Fprintln(cmd.ErrOrStderr(), "dagent-temporal:", msg)
				return climain.Reported{Code: exitFailed, Msg: msg}
			}
			if err := temporal.Cancel(ctx, c, args[0]); err != nil {
				return fmt.Errorf("run %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "run %s: cancel requested\n", args[0])
			return nil
		},
	}
	conn.register(cmd)
	return cmd
}

// endedAs is how the run runID ended, in lower case ("completed",
// "failed", "terminated", ...); false when it has not ended or cannot be
// told.
func endedAs(ctx context.Context, c client.Client, runID string) (string, bool) {
	d, err := c.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		return "", false
	}
	st := d.GetWorkflowExecutionInfo().GetStatus()
	if st == enums.WORKFLOW_EXECUTION_STATUS_RUNNING || st == enums.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
		return "", false
	}
	return strings.ToLower(st.String()), true
}
