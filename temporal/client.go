package temporal

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdk "go.temporal.io/sdk/temporal"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/runner"
)

// ErrRunExists is matched by the error of [Start] and [StartWith] when a
// run of the same id is open or has ended: a run id names one run, which
// is neither joined nor started again (that would run its done tasks
// again). The error names the run id.
var ErrRunExists = errors.New("run exists already")

// Start starts the run runID of spec on the workers of queue: the
// workflow [WorkflowName] whose id is runID. The spec is checked first
// ([durable.Spec.Check]). A run of that id, open or ended, is an error
// matching [ErrRunExists].
func Start(ctx context.Context, c client.Client, queue, runID string, spec durable.Spec) (client.WorkflowRun, error) {
	return StartWith(ctx, c, queue, Input{RunID: runID, Spec: spec})
}

// StartWith is [Start] of a whole [Input]: with initial results, known
// decisions, retry settings.
func StartWith(ctx context.Context, c client.Client, queue string, in Input) (client.WorkflowRun, error) {
	if err := runner.CheckRunID(in.RunID); err != nil {
		return nil, err
	}
	if err := in.Spec.Check(); err != nil {
		return nil, err
	}
	opts := client.StartWorkflowOptions{ID: in.RunID, TaskQueue: queue,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true}
	run, err := c.ExecuteWorkflow(ctx, opts, WorkflowName, in)
	if _, ok := errors.AsType[*serviceerror.WorkflowExecutionAlreadyStarted](err); ok {
		return nil, fmt.Errorf("run %s: %w: %w", in.RunID, ErrRunExists, err)
	}
	return run, err
}

// Tasks queries the run runID for where it is now ([QueryTasks]).
func Tasks(ctx context.Context, c client.Client, runID string) (*Snapshot, error) {
	v, err := c.QueryWorkflow(ctx, runID, "", QueryTasks)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := v.Get(&s); err != nil {
		return nil, fmt.Errorf("query %s: %w", QueryTasks, err)
	}
	return &s, nil
}

// ErrReview is matched by the error of [Decide] when the run refused the
// decision: its task is not a task of the run's current plan, not a
// human_review, or decided already. The error says which.
var ErrReview = errors.New("decision refused")

// Decide gives the decision d on the human_review task taskID of the run
// runID ([UpdateReview]) and returns once the run holds it. A decision on
// a review the run has not reached yet is kept for it; the first decision
// on a task stands.
func Decide(ctx context.Context, c client.Client, runID, taskID string, d runner.Decision) error {
	r, err := NewReview(taskID, d)
	if err != nil {
		return err
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: runID, UpdateName: UpdateReview, Args: []any{r},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if ae, ok := errors.AsType[*sdk.ApplicationError](err); ok {
		return fmt.Errorf("%w: %s", ErrReview, ae.Message())
	}
	return err
}

// Cancel asks the run runID to stop: its running attempts are cancelled,
// and it ends failed with the cancellation as its error, every finished
// task's result kept.
func Cancel(ctx context.Context, c client.Client, runID string) error {
	return c.CancelWorkflow(ctx, runID, "")
}

// Result waits for the run runID to end and returns its result.
func Result(ctx context.Context, c client.Client, runID string) (*Outcome, error) {
	var o Outcome
	if err := c.GetWorkflow(ctx, runID, "").Get(ctx, &o); err != nil {
		return nil, err
	}
	return &o, nil
}
