package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/spf13/cobra"
)

func newCancel() *cobra.Command {
	var (
		db     dbFlags
		format string
		wait   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a journaled run, from any terminal",
		Long: `Cancel a run of the journal, as Ctrl-C in the terminal that runs it would:
its tasks in flight end, the run is cancelled, and dagent resume RUN
continues it later. RUN is a run id, or enough of its beginning to name
one run.

The request goes through the journal: the process that runs the run sees
it within a fraction of a second and stops the run. dagent cancel waits
for the run to stop, up to --wait (0: not at all). A run that no live
process runs — interrupted (its process died) or waiting for review — is
marked cancelled at once. A run that ended (completed, failed, cancelled,
replan_required) is refused, exit 1.

--format json prints {"run_id", "status", "requested" (a live process was
asked to stop the run)}; "status" is the run's when dagent cancel returns.`,
		Example: `  dagent cancel 20250101T120000-1a2b3c4d
  dagent cancel 20250101T12 --wait 0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cancelRun(cmd, db, format, args[0], wait)
		},
	}
	db.register(cmd, false)
	formatFlag(cmd, &format)
	cmd.Flags().DurationVar(&wait, "wait", time.Minute, "how long to wait for the run to stop (0: return at once)")
	return cmd
}

func cancelRun(cmd *cobra.Command, db dbFlags, format, id string, wait time.Duration) error {
	s, err := openToResume(db)
	if err != nil {
		return err
	}
	defer closeStore(cmd, s)
	ctx := cmd.Context()
	r, err := durable.Load(ctx, s, id)
	if err != nil {
		return notFound(id, err)
	}
	owner, err := durable.Cancel(ctx, s, r.ID)
	if errors.Is(err, durable.ErrEnded) {
		fmt.Fprintf(cmd.ErrOrStderr(), "dagent: run %s has ended (%s): there is nothing to cancel\n", r.ID, r.Status)
		return exitCode(exitInvalid)
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if owner != nil && format == "text" {
		fmt.Fprintf(out, "asked process %d on %s to cancel run %s\n", owner.PID, owner.Host, r.ID)
	}
	status := durable.StatusCancelled
	if owner != nil {
		ctx, stop := interruptible(cmd)
		defer stop()
		// Ctrl-C stops waiting, not the cancel.
		if status, err = durable.AwaitStop(ctx, s, r.ID, wait); err != nil && ctx.Err() == nil {
			return err
		}
	}
	if format == "json" {
		return encodeJSON(out, struct {
			RunID     string         `json:"run_id"`
			Status    durable.Status `json:"status"`
			Requested bool           `json:"requested"`
		}{r.ID, status, owner != nil})
	}
	if status == durable.StatusRunning {
		fmt.Fprintf(out, "run %s is still running after %s: it stops once its tasks in flight end\n", r.ID, wait)
		return nil
	}
	fmt.Fprintf(out, "run %s %s; dagent resume %s goes on with it\n", r.ID, status, r.ID)
	return nil
}
