package web

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// A read of the Observer's reader in a journal of 10,000 runs that ended,
// each with two tasks committed, and 10 that run: what the server pays
// every Poll for its metrics.
func BenchmarkTail(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"))
	require.NoError(b, err)
	defer s.Close()
	ctx := context.Background()
	base := time.Now().Add(-24 * time.Hour)
	for i := range 10_010 {
		id := fmt.Sprintf("20250101T000000-%08x", i)
		created := base.Add(time.Duration(i) * time.Second)
		require.NoError(b, s.CreateRun(ctx, store.Run{ID: id, Plan: []byte(`{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"]}]}`), Created: created}))
		require.NoError(b, s.CommitBatch(ctx, id, store.Batch{
			Tasks:  []store.Task{{ID: "a", Status: "done", Committed: created}, {ID: "b", Status: "done", Committed: created}},
			Events: []store.Event{{Kind: "run_started", Time: created}, {Kind: "task_finished", TaskID: "a", Time: created}, {Kind: "task_finished", TaskID: "b", Time: created}},
		}))
		if i < 10_000 {
			require.NoError(b, s.SetStatus(ctx, id, "completed", ""))
		}
	}
	// Runs that changed lately are read again: these ended long ago.
	time.Sleep(tailSlack)
	t := newTail(s, runner.ObserverFunc(func(runner.Event) {}), time.Now())
	require.NoError(b, t.next(ctx))
	b.ReportAllocs()
	for b.Loop() {
		if err := t.next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
