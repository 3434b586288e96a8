package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store"
)

// reviewed starts a run that waits for a review of its draft, under id.
func reviewed(s store.Store, id string) {
	p, _ := plan.Parse([]byte(`{"mission": "Greet the team", "tasks": [
		{"id": "draft", "agent": "upper", "input": "hello team"},
		{"id": "approve", "type": "human_review", "input": "Send \"{{results.draft}}\"?", "depends_on": ["draft"]},
		{"id": "send", "agent": "upper", "input": "sent", "depends_on": ["approve"]}]}`))
	_, _ = durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("upper", upper), durable.WithRunID(id))
}

// A page of the runs of a status, newest first, and how many there are.
func ExampleList() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	for i := range 3 {
		reviewed(s, fmt.Sprint("r", i))
	}
	_ = s.CreateRun(ctx, store.Run{ID: "crashed"}) // running, and no process owns it
	page, err := durable.List(ctx, s, durable.Query{Statuses: []durable.Status{durable.StatusWaiting}, Limit: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range page.Runs {
		fmt.Println(r.ID, r.Status, r.Done, "of", r.Total, "done")
	}
	fmt.Println(page.Total, "waiting")
	page, _ = durable.List(ctx, s, durable.Query{Statuses: []durable.Status{durable.StatusInterrupted}})
	fmt.Println(page.Runs[0].ID, page.Runs[0].Status, page.Runs[0].Journaled)
	// Output:
	// r2 waiting 1 of 3 done
	// r1 waiting 1 of 3 done
	// 3 waiting
	// crashed interrupted running
}

// A run the journal holds as running is interrupted when its process died.
func ExampleRun_Shown() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	_ = s.CreateRun(ctx, store.Run{ID: "r"})
	r, _ := durable.Load(ctx, s, "r")
	status, live := r.Shown()
	fmt.Println(r.Status, status, live)
	// Output: running interrupted false
}

func ExampleParseStatus() {
	st, err := durable.ParseStatus("interrupted")
	fmt.Println(st, err)
	_, err = durable.ParseStatus("lost")
	fmt.Println(errors.Is(err, durable.ErrUnknownStatus), err)
	// Output:
	// interrupted <nil>
	// true unknown status "lost"; use one of running, interrupted, completed, failed, waiting, replan_required, cancelled
}

func ExampleShownStatuses() {
	fmt.Println(durable.ShownStatuses())
	// Output: [running interrupted completed failed waiting replan_required cancelled]
}

func ExampleEndedStatuses() {
	fmt.Println(durable.EndedStatuses())
	// Output: [completed failed waiting replan_required cancelled]
}

// Prune deletes the runs that ended before a time; a dry run says which.
func ExamplePrune() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	reviewed(s, "old")
	_ = s.CreateRun(ctx, store.Run{ID: "crashed"})
	tomorrow := time.Now().Add(24 * time.Hour)
	res, _ := durable.Prune(ctx, s, durable.PruneQuery{Before: tomorrow, DryRun: true})
	for _, r := range res.Deleted {
		fmt.Println("would delete", r.ID, r.Status)
	}
	res, _ = durable.Prune(ctx, s, durable.PruneQuery{Before: tomorrow, Statuses: []durable.Status{durable.StatusInterrupted, durable.StatusWaiting}})
	for _, r := range res.Deleted {
		fmt.Println("deleted", r.ID, r.Status)
	}
	left, _ := durable.List(ctx, s, durable.Query{})
	fmt.Println(left.Total, "runs left")
	// Output:
	// would delete old waiting
	// deleted crashed interrupted
	// deleted old waiting
	// 0 runs left
}

// A run's document is what dagent show --format json prints.
func ExampleRun_Document() {
	s, done := journal()
	defer done()
	reviewed(s, "r")
	r, _ := durable.Load(context.Background(), s, "r")
	doc := r.Document(durable.DocOptions{NoOutputs: true})
	fmt.Println(doc.Version, doc.RunID, doc.Status, doc.Live, doc.Order)
	for _, id := range doc.Order {
		fmt.Println(id, doc.Tasks[id].Status, string(doc.Tasks[id].Output))
	}
	// Output:
	// 1 r waiting false [draft approve send]
	// draft done null
	// approve waiting null
	// send pending null
}

// A task in detail: its input as the run gave it, and what it depends on.
func ExampleRun_Task() {
	s, done := journal()
	defer done()
	reviewed(s, "r")
	r, _ := durable.Load(context.Background(), s, "r")
	d, err := r.Task("approve")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Status, d.Plan.Type)
	fmt.Println(d.Input)
	for _, up := range d.Upstream {
		fmt.Println(up.ID, up.Status, string(up.Output))
	}
	for _, e := range d.Events {
		fmt.Println(e.Seq, e.Kind)
	}
	_, err = r.Task("publish")
	fmt.Println(err)
	// Output:
	// waiting human_review
	// Send "HELLO TEAM"?
	// draft done "HELLO TEAM"
	// 7 task_started
	// 8 task_waiting
	// run r has no task "publish"; its tasks are draft, approve, send
}

// A task's document is what dagent show RUN --task ID --format json prints.
func ExampleTaskDetail_Document() {
	s, done := journal()
	defer done()
	reviewed(s, "r")
	r, _ := durable.Load(context.Background(), s, "r")
	d, _ := r.Task("draft")
	doc := d.Document(durable.DocOptions{})
	b, _ := json.Marshal(map[string]any{"task_id": doc.TaskID, "agent": doc.Agent, "input": doc.Input, "output": doc.Output, "attempts": doc.Attempts})
	fmt.Println(string(b))
	// Output: {"agent":"upper","attempts":1,"input":"hello team","output":"HELLO TEAM","task_id":"draft"}
}

// The reviews a waiting run waits for, with what each reviews.
func ExampleRun_Reviews() {
	s, done := journal()
	defer done()
	reviewed(s, "r")
	r, _ := durable.Load(context.Background(), s, "r")
	for _, rv := range r.Reviews() {
		fmt.Println(rv.TaskID, "asks:", rv.Prompt)
		for _, up := range rv.Upstream {
			fmt.Println("it reviews", up.ID, string(up.Output))
		}
	}
	// Output:
	// approve asks: Send "HELLO TEAM"?
	// it reviews draft "HELLO TEAM"
}

func ExampleTaskView_Why() {
	v := durable.TaskView{Task: store.Task{ID: "fetch", Status: "running"}}
	fmt.Println(v.Why(durable.StatusInterrupted, false))
	v = durable.TaskView{Task: store.Task{ID: "fetch", Status: "failed", Error: "exit 1", Diagnosis: "no items"}, Committed: true}
	fmt.Println(v.Why(durable.StatusFailed, false))
	// Output:
	// in flight when the process died; a resume runs it again
	// no items
}

// Watch passes on a run's events as its process journals them, until the
// run ends.
func ExampleWatch() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	// Another process runs the run; here, a goroutine with the lease of
	// a live process.
	host, _ := os.Hostname()
	owner := store.Owner{ID: "other", PID: os.Getppid(), Host: host}
	_ = s.CreateRun(ctx, store.Run{ID: "r"})
	_ = s.Acquire(ctx, "r", owner, nil)
	go func() {
		for _, kind := range []string{"run_started", "task_started", "task_finished", "run_finished"} {
			_ = s.AppendEvents(ctx, "r", []store.Event{{Kind: kind}})
			time.Sleep(5 * time.Millisecond)
		}
		_ = s.SetStatus(ctx, "r", string(durable.StatusCompleted), "")
		_ = s.Release(ctx, "r", owner)
	}()
	status, err := durable.Watch(ctx, s, "r", 0, 2*time.Millisecond, func(events []store.Event) error {
		for _, e := range events {
			fmt.Println(e.Seq, e.Kind)
		}
		return nil
	})
	fmt.Println(status, err)
	// Output:
	// 1 run_started
	// 2 task_started
	// 3 task_finished
	// 4 run_finished
	// completed <nil>
}

// An event as the documents show it.
func ExampleNewEventDoc() {
	e := store.Event{Seq: 3, Kind: "task_finished", Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), TaskID: "a", Data: json.RawMessage(`{"attempt":1}`)}
	b, _ := json.Marshal(durable.NewEventDoc(e))
	fmt.Println(string(b))
	// Output: {"seq":3,"kind":"task_finished","time":"2025-01-01T00:00:00Z","task_id":"a","data":{"attempt":1}}
}

// dagent cancel: ask the run's owner to stop it, and wait until it has.
func ExampleAwaitStop() {
	s, done := journal()
	defer done()
	ctx := context.Background()
	host, _ := os.Hostname()
	owner := store.Owner{ID: "other", PID: os.Getppid(), Host: host}
	_ = s.CreateRun(ctx, store.Run{ID: "r"})
	_ = s.Acquire(ctx, "r", owner, nil)
	// The owner, in another process, stops the run when asked.
	go func() {
		for {
			if asked, _ := s.CancelRequested(ctx, "r", owner); asked {
				break
			}
			time.Sleep(time.Millisecond)
		}
		_ = s.SetStatus(ctx, "r", string(durable.StatusCancelled), durable.ErrCancelRequested.Error())
		_ = s.Release(ctx, "r", owner)
	}()
	if _, err := durable.Cancel(ctx, s, "r"); err != nil {
		fmt.Println(err)
		return
	}
	status, err := durable.AwaitStop(ctx, s, "r", time.Minute)
	fmt.Println(status, err)
	// Output: cancelled <nil>
}
