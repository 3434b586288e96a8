package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dagent-dev/dagent/temporal"
)

func newCancel() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run",
		Long: `Cancel the run RUN: its running attempts are cancelled, and it ends failed
with the cancellation as its error, every finished task's result kept, as
Ctrl-C ends a local run. dagent-temporal show RUN prints it then.`,
		Example: `  dagent-temporal cancel nightly-2025-01-01`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := conn.dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := temporal.Cancel(cmd.Context(), c, args[0]); err != nil {
				return fmt.Errorf("run %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "run %s: cancel requested\n", args[0])
			return nil
		},
	}
	conn.register(cmd)
	return cmd
}
