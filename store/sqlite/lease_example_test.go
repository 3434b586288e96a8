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

// A run's lease: one owner at a time, kept fresh while it runs, given up
// at its end; another owner is refused unless the dead function says the
// owner died.
func ExampleStore_Acquire() {
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

	first := store.Owner{ID: "first", PID: 100, Host: "a"}
	second := store.Owner{ID: "second", PID: 200, Host: "b"}
	fmt.Println(s.Acquire(ctx, "r", first, nil))
	fmt.Println(s.Heartbeat(ctx, "r", first))
	err = s.Acquire(ctx, "r", second, func(o store.Owner) bool { return false })
	fmt.Println(errors.Is(err, store.ErrOwned))
	// The first owner died: the second takes the run over.
	fmt.Println(s.Acquire(ctx, "r", second, func(o store.Owner) bool { return o.ID == "first" }))
	fmt.Println(errors.Is(s.Heartbeat(ctx, "r", first), store.ErrNotOwner))
	fmt.Println(s.Release(ctx, "r", second))
	rec, _ := s.Load(ctx, "r")
	fmt.Println(rec.Owner)
	// Output:
	// <nil>
	// <nil>
	// true
	// <nil>
	// true
	// <nil>
	// <nil>
}

// A reader opens the journal read-only: it never writes, and reads beside a
// writer without waiting for its lock.
func ExampleReadOnly() {
	dir, err := os.MkdirTemp("", "dagent-store")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "dagent.db")
	w, err := sqlite.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	ctx := context.Background()
	_ = w.CreateRun(ctx, store.Run{ID: "r", Mission: "Count the words"})

	r, err := sqlite.Open(path, sqlite.ReadOnly())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	runs, _ := r.List(ctx)
	fmt.Println(len(runs), runs[0].ID, runs[0].Mission)
	fmt.Println(errors.Is(r.SetStatus(ctx, "r", "failed", ""), store.ErrReadOnly))
	// Output:
	// 1 r Count the words
	// true
}
