package temporal

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/temporal/internal/devserver"
)

// The recorded histories of the workflow, which today's workflow must
// replay: a change that breaks them breaks the runs under way on a
// cluster (guard it with workflow.GetVersion, and record new histories
// beside these). TestRecordHistories writes all but the last, a run
// whose review was decided by the signal, as older clients send it.
var histories = []string{"testdata/run_history.json", "testdata/replan_history.json", "testdata/mission_history.json", "testdata/rounds_history.json", "testdata/run_history_signal.json"}

// record makes TestRecordHistories run the recorded runs on a dev server
// and write their histories:
//
//	go test -run TestRecordHistories -record
var record = flag.Bool("record", false, "record the histories of testdata on a dev server")

func TestReplayHistories(t *testing.T) {
	for _, h := range histories {
		t.Run(filepath.Base(h), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			RegisterWorkflow(r)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), h))
		})
	}
}

// TestReplayCatchesNondeterminism checks that the replay has teeth: a
// workflow that no longer reads the catalog first does not replay. Replay
// compares the commands (their types and ids), not the activities'
// inputs: a change that only alters what an activity is asked replays.
func TestReplayCatchesNondeterminism(t *testing.T) {
	changed := func(ctx workflow.Context, in Input) (*Outcome, error) {
		return nil, workflow.Sleep(ctx, time.Second)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: WorkflowName})
	err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), histories[0])
	// TMPRL1100 is the SDK's code of a nondeterminism error.
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TMPRL1100")
}

func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.DiscardHandler))
}

// TestRecordHistories runs, on a dev server, a plan that retries, verifies
// and waits for a review approved by an update ([Decide]), a plan whose
// tail a scripted planner repairs, a mission the planner plans whose
// budget refuses a task, and a mission in rounds halted by its budget;
// with -record it writes their histories.
func TestRecordHistories(t *testing.T) {
	if !*record {
		t.Skip("run with -record to record the histories")
	}
	cli := devserver.CLI()
	require.NotEmpty(t, cli, devserver.Missing)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	srv, err := devserver.Start(ctx, cli, quietLogger(), &out)
	require.NoError(t, err, out.String())
	defer func() { _ = srv.Stop() }()
	c := srv.Client()

	var calls atomic.Int32
	reg := workers(t, map[string]agent.Agent{
		"echo": echo("draft"),
		"flaky": agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
			if calls.Add(1) == 1 {
				return agent.Result{}, errors.New("flaked")
			}
			return agent.Result{Output: map[string]any{"n": 3}}, nil
		}),
		"broken": agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
			return agent.Result{}, errors.New("broken")
		}),
		"fixer": echo("fixed"),
	})
	const queue = "dagent-record"
	w := worker.New(c, queue, worker.Options{})
	a := NewActivities(reg)
	RegisterWorkflow(w)
	w.RegisterActivityWithOptions(a.Catalog, activity.RegisterOptions{Name: ActivityCatalog})
	w.RegisterActivityWithOptions(a.Attempt, activity.RegisterOptions{Name: ActivityAttempt})
	repaired := mustPlan(t, `{"mission": "ship it", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "c", "agent": "fixer", "input": "go", "depends_on": ["a"]}]}`)
	w.RegisterActivityWithOptions(func(context.Context, RepairRequest) (RepairReply, error) {
		return RepairReply{Plan: repaired, Reason: "use the fixer", Usage: llm.Usage{PromptTokens: 10}, Calls: 1}, nil
	}, activity.RegisterOptions{Name: ActivityRepair})
	require.NoError(t, w.Start())
	defer w.Stop()
	// The runs of missions have workers of their own, on the planner's
	// scripted model.
	missions := func(queue string, model llm.Client) {
		w := worker.New(c, queue, worker.Options{})
		Register(w, NewActivities(nil, WithLLM(model)))
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
	}
	missions("dagent-record-mission", planner(twoTasks))
	missions("dagent-record-rounds", roundPlanner(
		`{"action": "continue", "agents": {"writer": {"prompt": "You write."}}, "tasks": [{"id": "one", "agent": "writer", "input": "one"}]}`,
		`{"action": "continue", "tasks": [{"id": "two", "agent": "writer", "input": "two", "depends_on": ["one"]}]}`))

	plain := mustPlan(t, `{"tasks": [
		{"id": "count", "agent": "flaky", "input": "count", "on_failure": "retry", "max_retries": 2,
		 "verification": "(> (get data/result \"n\") 2)"},
		{"id": "ok", "type": "human_review", "input": "approve?", "depends_on": ["count"]},
		{"id": "publish", "agent": "echo", "input": "ship", "depends_on": ["ok"]}]}`)
	run, err := StartWith(ctx, c, queue, Input{RunID: "record-plain", Spec: durable.Spec{Plan: plain}, Backoff: &runner.Backoff{Initial: 10 * time.Millisecond}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s, err := Tasks(ctx, c, "record-plain")
		return err == nil && s.Status == "waiting"
	}, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, Decide(ctx, c, "record-plain", "ok", runner.Approve()))
	o, err := Result(ctx, c, "record-plain")
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, o.Run.Status)
	writeHistory(ctx, t, c, run.GetID(), histories[0])

	broken := mustPlan(t, `{"mission": "ship it", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "b", "agent": "broken", "input": "go", "depends_on": ["a"], "on_failure": "replan"}]}`)
	run, err = Start(ctx, c, queue, "record-replan", durable.Spec{Plan: broken, Replan: durable.ReplanDefaults()})
	require.NoError(t, err)
	o, err = Result(ctx, c, "record-replan")
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, o.Run.Status)
	require.Equal(t, 1, o.Execution.ReplanCount)
	writeHistory(ctx, t, c, run.GetID(), histories[1])

	// A mission planned first, whose second task is past the budget.
	run, err = Start(ctx, c, "dagent-record-mission", "record-mission", durable.Spec{Mission: "ship", Budget: executor.Budget{MaxCalls: 2}})
	require.NoError(t, err)
	o, err = Result(ctx, c, "record-mission")
	require.NoError(t, err)
	require.Equal(t, runner.ClassBudget, o.Run.Tasks["b"].Class)
	writeHistory(ctx, t, c, run.GetID(), histories[2])

	// A mission in rounds, halted by its budget after the second round's
	// planning.
	run, err = Start(ctx, c, "dagent-record-rounds", "record-rounds", durable.Spec{Mission: "write twice", Rounds: 3, Budget: executor.Budget{MaxCalls: 3}})
	require.NoError(t, err)
	o, err = Result(ctx, c, "record-rounds")
	require.NoError(t, err)
	require.Equal(t, executor.HaltBudget, o.Execution.Halt)
	writeHistory(ctx, t, c, run.GetID(), histories[3])
}

// writeHistory writes the history of workflow id to path.
func writeHistory(ctx context.Context, t *testing.T, c client.Client, id, path string) {
	t.Helper()
	hist := &historypb.History{}
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	t.Logf("wrote %d events to %s", len(hist.Events), path)
}
