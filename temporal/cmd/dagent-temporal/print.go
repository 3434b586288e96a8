package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/temporal"
)

// pollEvery is how often a command that waits for a run asks it whether
// it waits for a review.
const pollEvery = 500 * time.Millisecond

// await waits for the run runID to end, or to wait for a review, and
// prints it; the error carries the exit code.
func await(ctx context.Context, cmd *cobra.Command, c client.Client, runID, format string) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	type ended struct {
		out *temporal.Outcome
		err error
	}
	done := make(chan ended, 1)
	go func() {
		out, err := temporal.Result(ctx, c, runID)
		done <- ended{out, err}
	}()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case e := <-done:
			if e.err != nil {
				return runFailed(cmd, runID, cause(ctx, e.err))
			}
			return printOutcome(cmd, e.out, format)
		case <-tick.C:
			s, err := temporal.Tasks(ctx, c, runID)
			if err != nil || s.Status != string(runner.StatusWaiting) {
				continue // not queryable yet, or closed: the result comes
			}
			return printSnapshot(cmd, s, format)
		case <-ctx.Done():
			return cause(ctx, ctx.Err())
		}
	}
}

// closed reports whether the run runID has ended.
func closed(ctx context.Context, c client.Client, runID string) (bool, error) {
	d, err := c.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		return false, fmt.Errorf("run %s: %w", runID, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// printOutcome prints how a run ended, and returns the exit of its status.
func printOutcome(cmd *cobra.Command, out *temporal.Outcome, format string) error {
	res := out.Run
	if res == nil && out.Planned != nil {
		return printPlanned(cmd, out, format)
	}
	if res == nil {
		return errors.New("the run ended without a result")
	}
	w := cmd.OutOrStdout()
	if format == "json" {
		if err := jsonv.EncodeIndent(w, out, "  "); err != nil {
			return err
		}
		return climain.RunExit(res.Status)
	}
	head := fmt.Sprintf("run %s %s in %v", res.RunID, res.Status, res.Duration.Round(time.Millisecond))
	if out.Execution != nil && out.Execution.ReplanCount > 0 {
		head += ", after " + prose.Plural(out.Execution.ReplanCount, "replan")
	}
	fmt.Fprintln(w, head)
	if res.Err != nil {
		fmt.Fprintln(w, "error:", prose.OneLine(res.Err.Error()))
	}
	writeTasks(w, res.Tasks)
	writeReviews(w, res.RunID, res.PendingReviews)
	return climain.RunExit(res.Status)
}

// printSnapshot prints where a running run is: as text, its tasks; as
// JSON, the result document of dagent run with the run's status so far.
// A run that waits for review exits 3.
func printSnapshot(cmd *cobra.Command, s *temporal.Snapshot, format string) error {
	res := snapshotResult(s)
	w := cmd.OutOrStdout()
	if format == "json" {
		if err := jsonv.EncodeIndent(w, res, "  "); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "run %s %s\n", s.RunID, s.Status)
		writeTasks(w, res.Tasks)
		writeReviews(w, s.RunID, s.PendingReviews)
	}
	if res.Status == runner.StatusWaiting {
		return exitCode(exitWaiting)
	}
	return nil
}

// snapshotResult is the result form of a snapshot.
func snapshotResult(s *temporal.Snapshot) *runner.Result {
	res := &runner.Result{RunID: s.RunID, Status: runner.Status(s.Status), Tasks: make(map[string]*runner.TaskResult, len(s.Tasks)),
		PendingReviews: s.PendingReviews}
	for _, t := range s.Tasks {
		tr := &runner.TaskResult{ID: t.ID, Status: t.Status, Attempts: t.Attempts, Output: t.Output, Class: t.Class, Diagnosis: t.Diagnosis}
		if t.Error != "" {
			tr.Err = errors.New(t.Error)
		}
		res.Tasks[t.ID] = tr
	}
	return res
}

// writeTasks writes a table of the tasks, by id: their status, attempts
// and the first line of their error.
func writeTasks(w io.Writer, tasks map[string]*runner.TaskResult) {
	counts := map[runner.TaskStatus]int{}
	for _, t := range tasks {
		counts[t.Status]++
	}
	line := prose.Plural(len(tasks), "task")
	for _, st := range []runner.TaskStatus{runner.TaskDone, runner.TaskRunning, runner.TaskWaiting, runner.TaskFailed, runner.TaskSkipped, runner.TaskPending} {
		if counts[st] > 0 {
			line += fmt.Sprintf(", %d %s", counts[st], st)
		}
	}
	fmt.Fprintln(w, line)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tERROR")
	for _, id := range slices.Sorted(maps.Keys(tasks)) {
		t := tasks[id]
		msg := ""
		if t.Err != nil {
			msg = prose.Excerpt(t.Err.Error(), 100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", prose.OneLine(id), t.Status, t.Attempts, msg)
	}
	tw.Flush()
}

// writeReviews writes the reviews a run waits for, and how to decide
// them.
func writeReviews(w io.Writer, runID string, reviews []runner.PendingReview) {
	for _, r := range reviews {
		fmt.Fprintf(w, "review %s waits: %s\n", r.TaskID, prose.Excerpt(r.Prompt, 200))
		fmt.Fprintf(w, "  decide: dagent-temporal approve %s %s (or reject)\n", runID, r.TaskID)
	}
}

// runFailed is the command's error when the run's workflow ended with err
// rather than a result. A run that could not start, whose problems are
// printed, exits 1, as dagent run does for an invalid plan; so does a run
// that ended another way without a result — terminated, timed out, or
// failed for a reason other than its tasks. Any other error (no such run,
// no connection) is the command's, exit 2.
func runFailed(cmd *cobra.Command, runID string, err error) error {
	var msg string
	app, isApp := errors.AsType[*sdktemporal.ApplicationError](err)
	switch {
	case isApp && app.Type() == temporal.InvalidInputType:
		msg = fmt.Sprintf("run %s did not start: %s", runID, app.Error())
	case ended(err):
		msg = fmt.Sprintf("run %s ended without a result: %s", runID, err)
	default:
		return fmt.Errorf("run %s: %w", runID, err)
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "dagent-temporal:", prose.OneLine(msg))
	return climain.Reported{Code: exitFailed, Msg: msg}
}

// ended reports whether err says how a workflow ended: it is one of the
// errors of a closed workflow execution, not of the client.
func ended(err error) bool {
	if _, ok := errors.AsType[*sdktemporal.WorkflowExecutionError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*sdktemporal.TerminatedError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*sdktemporal.TimeoutError](err); ok {
		return true
	}
	_, ok := errors.AsType[*sdktemporal.ApplicationError](err)
	return ok
}
