package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// A Journal makes a run durable as it goes, so that a run that stopped —
// here at a human review — resumes from its done tasks, which never run
// again.
func ExampleNewJournal() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "dagent.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "draft", "input": "Draft the release notes"},
		{"id": "review", "type": "human_review", "depends_on": ["draft"]},
		{"id": "publish", "input": "Publish {{results.draft}}", "depends_on": ["review"]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	canonical, err := p.Canonical()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := s.CreateRun(ctx, store.Run{ID: "release", Plan: canonical}); err != nil {
		fmt.Println(err)
		return
	}
	work := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		fmt.Println("run", req.TaskID)
		return agent.Result{Output: "done: " + req.Input}, nil
	})
	run := func(opts ...runner.RunOption) {
		j := store.NewJournal(s, "release")
		rn := runner.New(runner.WithAgent(plan.DefaultAgent, work), runner.WithJournal(j), runner.WithObserver(j))
		res, err := rn.RunPlan(ctx, p, append(opts, runner.WithRunID("release"))...)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Status)
	}
	run()

	// Later, perhaps in another process: resume with the review approved.
	rec, err := s.Load(ctx, "release")
	if err != nil {
		fmt.Println(err)
		return
	}
	outputs, waiting, err := store.Resume(rec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Status, waiting)
	run(runner.WithInitialResults(outputs), runner.WithReviews(map[string]runner.Decision{"review": runner.Approve()}))
	// Output:
	// run draft
	// waiting
	// waiting [review]
	// run publish
	// completed
}

// Replayer answers the LLM requests of a recorded run from what the run's
// journal recorded with RecordLLM, so that a run can be replayed without
// the model.
func ExampleReplayer() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "dagent.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.CreateRun(ctx, store.Run{ID: "r1"}); err != nil {
		fmt.Println(err)
		return
	}

	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "Paris."}}, nil
	})
	ask := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the capital of France?"}}}
	client := store.NewJournal(s, "r1").RecordLLM(model)
	if _, err := client.Complete(ctx, ask); err != nil {
		fmt.Println(err)
		return
	}

	rec, err := s.Load(ctx, "r1")
	if err != nil {
		fmt.Println(err)
		return
	}
	replay, err := store.Replayer(rec)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := replay.Complete(ctx, ask)
	fmt.Println(resp.Message.Content, err)
	_, err = replay.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "And of Italy?"}}})
	fmt.Println(errors.Is(err, llm.ErrNotRecorded))
	// Output:
	// Paris. <nil>
	// true
}

// A replanning run commits each plan it adopts through its Journal, with
// the repair that led to it; the tasks committed after are that version's.
// Load gives every version, every committed state (Commits) and each task's
// latest state (Tasks).
func ExampleJournal_CommitPlan() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "dagent.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()

	first, _ := plan.Parse([]byte(`{"tasks":[{"id":"fetch","input":"get"},{"id":"parse","input":"strict","depends_on":["fetch"]}]}`))
	if err := s.CreateRun(ctx, store.Run{ID: "r1", Spec: []byte(`{"version":1}`)}); err != nil {
		fmt.Println(err)
		return
	}
	j := store.NewJournal(s, "r1")
	commit := func(id string, status runner.TaskStatus) {
		if err := j.Commit(ctx, runner.Commit{TaskID: id, Status: status, Attempts: 1}); err != nil {
			fmt.Println(err)
		}
	}
	if err := j.CommitPlan(ctx, executor.PlanCommit{Version: 0, Plan: first}); err != nil {
		fmt.Println(err)
		return
	}
	commit("fetch", runner.TaskDone)
	commit("parse", runner.TaskFailed)

	// The planner repairs the plan: version 1.
	repaired, _ := plan.Parse([]byte(`{"tasks":[{"id":"fetch","input":"get"},{"id":"parse","input":"lenient","depends_on":["fetch"]}]}`))
	trial := &executor.Trial{Attempt: 1, TaskID: "parse", Class: "agent_error", Diagnosis: "bad date"}
	if err := j.CommitPlan(ctx, executor.PlanCommit{Version: 1, Plan: repaired, Trial: trial}); err != nil {
		fmt.Println(err)
		return
	}
	commit("parse", runner.TaskDone)

	rec, err := s.Load(ctx, "r1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range rec.Plans {
		fmt.Printf("plan version %d trial=%s\n", v.Version, v.Trial)
	}
	for _, t := range rec.Commits {
		fmt.Printf("commit %s@%d %s\n", t.ID, t.Version, t.Status)
	}
	fmt.Println("latest parse:", rec.Tasks["parse"].Status, "of version", rec.Tasks["parse"].Version)
	latest, _ := plan.Parse(rec.LatestPlan())
	fmt.Println("at the repaired plan:", latest.Tasks[1].Input)
	// Output:
	// plan version 0 trial=
	// plan version 1 trial={"attempt":1,"task_id":"parse","class":"agent_error","diagnosis":"bad date","output":"","new_task_count":0}
	// commit fetch@0 done
	// commit parse@0 failed
	// commit parse@1 done
	// latest parse: done of version 1
	// at the repaired plan: lenient
}
