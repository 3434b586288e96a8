package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dagent-dev/dagent/temporal"
)

type showFlags struct {
	conn   connFlags
	format string
}

func newShow() *cobra.Command {
	var f showFlags
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run: its tasks while it runs, its result once it ended",
		Long: `Show the run RUN. While it runs, its tasks as the workflow holds them now
(the query "tasks"): status, attempts, error, and the reviews it waits
for; once it ended, its result, as dagent-temporal start --wait prints it.
--format json prints the result document of dagent run, with the status
so far ("running" or "waiting") for a run that has not ended.

Exit codes: 0 the run completed or is running, 1 it failed, 2 usage error
or no such run, 3 it waits for review, 4 it needs a new plan.`,
		Example: `  dagent-temporal show nightly-2025-01-01
  dagent-temporal show nightly-2025-01-01 --format json | jq '.tasks.report.output'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.conn.dial(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			ended, err := closed(ctx, c, args[0])
			if err != nil {
				return err
			}
			if ended {
				out, err := temporal.Result(ctx, c, args[0])
				if err != nil {
					return runFailed(cmd, args[0], err)
				}
				return printOutcome(cmd, out, f.format)
			}
			s, err := temporal.Tasks(ctx, c, args[0])
			if err != nil {
				return fmt.Errorf("run %s: %w", args[0], err)
			}
			return printSnapshot(cmd, s, f.format)
		},
	}
	f.conn.register(cmd)
	formatFlag(cmd, &f.format)
	return cmd
}
