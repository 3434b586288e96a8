package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// A follower of a run reads the events appended since the last it saw.
func ExampleStore_EventsAfter() {
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
	_ = s.CreateRun(ctx, store.Run{ID: "r"})
	_ = s.AppendEvents(ctx, "r", []store.Event{{Kind: "run_started", TaskID: "-"}, {Kind: "task_started", TaskID: "a"}})
	seen := 0
	for range 2 {
		events, _ := s.EventsAfter(ctx, "r", seen)
		for _, e := range events {
			fmt.Println(e.Seq, e.Kind+" "+e.TaskID)
			seen = e.Seq
		}
		_ = s.AppendEvents(ctx, "r", []store.Event{{Kind: "task_finished", TaskID: "a"}})
	}
	// Output:
	// 1 run_started -
	// 2 task_started a
	// 3 task_finished a
}

// A run is deleted unless a live process owns it.
func ExampleStore_DeleteRun() {
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
	_ = s.CreateRun(ctx, store.Run{ID: "old"})
	_ = s.CreateRun(ctx, store.Run{ID: "live"})
	_ = s.Acquire(ctx, "live", store.Owner{ID: "o", PID: 100, Host: "a"}, nil)
	alive := func(store.Owner) bool { return false }
	fmt.Println(s.DeleteRun(ctx, "old", alive))
	fmt.Println(errors.Is(s.DeleteRun(ctx, "live", alive), store.ErrOwned))
	runs, _ := s.List(ctx)
	fmt.Println(len(runs), runs[0].ID)
	// Output:
	// <nil>
	// true
	// 1 live
}

// Another process asks a run's owner to cancel it; the owner sees the
// request.
func ExampleStore_RequestCancel() {
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
	_ = s.CreateRun(ctx, store.Run{ID: "r"})
	o := store.Owner{ID: "o", PID: 100, Host: "a"}
	_ = s.Acquire(ctx, "r", o, nil)
	fmt.Println(s.CancelRequested(ctx, "r", o))
	fmt.Println(s.RequestCancel(ctx, "r", o))
	fmt.Println(s.CancelRequested(ctx, "r", o))
	// Output:
	// false <nil>
	// <nil>
	// true <nil>
}
