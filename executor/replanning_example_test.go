package executor_test

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// A driver of its own runs each plan version, asks the replanner when the
// Replanning says so, and hands it the answers: here the runs are
// scripted, the first failing its fetch, the second, of the repair,
// completing.
func ExampleReplanning() {
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "fetch", "input": "Fetch the report", "on_failure": "replan"},
		{"id": "sum", "input": "Summarise it", "depends_on": ["fetch"]}]}`))
	if err != nil {
		panic(err)
	}
	d, err := p.DAG()
	if err != nil {
		panic(err)
	}
	planner := executor.ReplannerFunc(func(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
		repair, err := plan.Parse([]byte(`{"tasks": [
			{"id": "mirror", "input": "Fetch the report from the mirror"},
			{"id": "sum", "input": "Summarise it", "depends_on": ["mirror"]}]}`))
		return &executor.Repair{Plan: repair, Reason: "the origin is gone; the mirror has it"}, err
	})
	r, err := executor.NewReplanning("report", d, executor.WithReplanner(planner))
	if err != nil {
		panic(err)
	}
	for {
		run := r.Next()
		// Commit run.Commit, if any, then emit run.Events.
		fmt.Println("run", run.ID, "version", run.Version, "commit", run.Commit != nil, kinds(run.Events))
		dec := r.Ran(scripted(run), nil, nil)
		fmt.Println("ran:", dec.Step, kinds(dec.Events))
		if dec.Step != executor.StepRepair {
			break
		}
		// The cooldown, r.Cooldown(), would be waited here.
		next, err := planner.Repair(context.Background(), "Summarise the report", r.Completed(), dec.Failure, r.Result().History)
		if next != nil {
			r.Spend(next.Usage)
		}
		var nd *plan.DAG
		var rep critic.Report
		if err == nil && next.Plan != nil {
			nd, _ = next.Plan.DAG()
			rep = critic.ReviewDAG(nd)
		}
		dec = r.Repaired(next, err, nd, rep)
		fmt.Println("repaired:", dec.Step, kinds(dec.Events))
		if dec.Step != executor.StepRun {
			break
		}
	}
	res := r.Result()
	fmt.Println(res.Status, res.ReplanCount, res.ExecutionAttempts, res.History[0].Reason)
	// Output:
	// run report version 0 commit true []
	// ran: repair [replan_requested]
	// repaired: run []
	// run report.1 version 1 commit true [repair_adopted]
	// ran: done []
	// completed 1 2 the origin is gone; the mirror has it
}

// kinds lists the kinds of evs.
func kinds(evs []runner.Event) []runner.EventKind {
	out := []runner.EventKind{}
	for _, ev := range evs {
		out = append(out, ev.Kind)
	}
	return out
}

// scripted is the result of a run: every task of the plan done, but the
// fetch, which asks for a replan.
func scripted(run executor.NextRun) *runner.Result {
	rr := &runner.Result{RunID: run.ID, Status: runner.StatusCompleted, Tasks: make(map[string]*runner.TaskResult)}
	for _, t := range run.DAG.Plan().Tasks {
		rr.Tasks[t.ID] = &runner.TaskResult{ID: t.ID, Status: runner.TaskDone, Attempts: 1, Output: t.ID + " done"}
	}
	if f := rr.Tasks["fetch"]; f != nil {
		f.Status, f.Output, f.Diagnosis = runner.TaskFailed, nil, "410 Gone"
		rr.Tasks["sum"].Status, rr.Tasks["sum"].Attempts, rr.Tasks["sum"].Output = runner.TaskPending, 0, nil
		rr.Status, rr.Replan = runner.StatusReplanRequired, &runner.ReplanRequest{TaskID: "fetch", Diagnosis: "410 Gone"}
	}
	return rr
}
