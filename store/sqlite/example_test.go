package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// Open creates the database file on first use; runs are then recorded,
// listed and loaded by id.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "runs", "dagent.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	ctx := context.Background()
	err = s.CreateRun(ctx, store.Run{ID: "r1", Mission: "Count the words", Plan: []byte(`{"tasks": [{"id": "count"}]}`)})
	fmt.Println(err)
	runs, err := s.List(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range runs {
		fmt.Println(r.ID, r.Status, r.Done, "of", r.Total, r.Mission)
	}
	_, err = s.Load(ctx, "r2")
	fmt.Println(errors.Is(err, store.ErrNotFound), err)
	// Output:
	// <nil>
	// r1 running 0 of 1 Count the words
	// true store: load run "r2": run not found
}

// CommitBatch records several task states and events at once: all of them
// are durable when it returns nil, none of them when it fails.
func ExampleStore_CommitBatch() {
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
	err = s.CommitBatch(ctx, "r1", store.Batch{
		Tasks: []store.Task{
			{ID: "a", Status: "done", Attempts: 1, Output: []byte(`"A"`)},
			{ID: "b", Status: "done", Attempts: 1, Output: []byte(`"B"`)},
		},
		Events: []store.Event{{Kind: "task_finished", TaskID: "a"}, {Kind: "task_finished", TaskID: "b"}},
	})
	fmt.Println(err)
	err = s.CommitBatch(ctx, "r1", store.Batch{Tasks: []store.Task{
		{ID: "c", Status: "done", Output: []byte(`"C"`)},
		{ID: "d", Status: "done", Output: []byte(`{not JSON`)},
	}})
	fmt.Println(err)
	rec, err := s.Load(ctx, "r1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rec.Tasks), "tasks,", len(rec.Events), "events")
	// Output:
	// <nil>
	// store: run "r1": commit batch: task "d": the output is not valid JSON
	// 2 tasks, 2 events
}

// A plan is cached under a key its user derives, and found under it.
func ExampleStore_CachePlan() {
	dir, _ := os.MkdirTemp("", "dagent")
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	_, err = s.CachedPlan(ctx, "k1")
	fmt.Println(errors.Is(err, store.ErrNotCached))
	_ = s.CachePlan(ctx, store.CachedPlan{Key: "k1", Mission: "count", Plan: json.RawMessage(`{"tasks": [{"id": "a"}]}`), RunID: "r1"})
	p, err := s.CachedPlan(ctx, "k1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Mission, p.RunID, string(p.Plan))
	// Output:
	// true
	// count r1 {"tasks": [{"id": "a"}]}
}
