package temporal

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// historyFile is the history of a run of RunPlan on the diamond plan, as a
// dev server recorded it (see the record flag).
const historyFile = "testdata/runplan_history.json"

// TestReplayRunPlan replays a recorded history with today's RunPlan: it
// fails when a change to RunPlan would break runs already under way.
func TestReplayRunPlan(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(RunPlan)
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, historyFile); err != nil {
		t.Fatal(err)
	}
}

// TestReplayCatchesNondeterminism checks that the replay test has teeth: a
// RunPlan that runs its tasks one at a time no longer replays a history in
// which b and c ran together. (Swapping b and c within their wave would
// replay fine: replay matches activity types and ids, not inputs.)
func TestReplayCatchesNondeterminism(t *testing.T) {
	oneByOne := func(ctx workflow.Context, tasks []Task) ([]Result, error) {
		waves, err := Waves(tasks)
		if err != nil {
			return nil, err
		}
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		var results []Result
		for _, wave := range waves {
			for _, task := range wave {
				var out string
				if err := workflow.ExecuteActivity(ctx, RunTask, TaskInput{ID: task.ID}).Get(ctx, &out); err != nil {
					return nil, err
				}
				results = append(results, Result{ID: task.ID, Output: out})
			}
		}
		return results, nil
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(oneByOne, workflow.RegisterOptions{Name: "RunPlan"})
	// The replayer logs the workflow's panic with its stack: keep it quiet.
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	err := r.ReplayWorkflowHistoryFromJSONFile(quiet, historyFile)
	// TMPRL1100 is the SDK's code for a nondeterminism error.
	if err == nil || !strings.Contains(err.Error(), "TMPRL1100") {
		t.Fatalf("replay of a changed RunPlan = %v, want a nondeterminism error", err)
	}
	t.Logf("replay of the changed RunPlan: %v", err)
}
