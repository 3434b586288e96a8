package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// Large outputs committed while a commit is in flight go to the next
// transactions a few at a time, each commit still returning once its
// own is durable.
func TestJournalSplitsLargeOutputs(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	g := newGatedStore(s)
	j := store.NewJournal(g, "r")
	firstDone := make(chan error, 1)
	go func() { firstDone <- j.Commit(ctx, runner.Commit{TaskID: "first", Status: runner.TaskDone, Output: 0}) }()
	<-g.entered
	const n = 6
	big := strings.Repeat("x", 3<<20)
	var wg sync.WaitGroup
	for i := range n {
		id := "big" + strconv.Itoa(i)
		wg.Go(func() {
			assert.NoError(t, j.Commit(ctx, runner.Commit{TaskID: id, Status: runner.TaskDone, Output: big + id}))
			assert.True(t, g.isDurable(id), "%s returned before its batch committed", id)
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(g.release)
	wg.Wait()
	require.NoError(t, <-firstDone)
	g.mu.Lock()
	batches := slices.Clone(g.batches[1:])
	g.mu.Unlock()
	assert.GreaterOrEqual(t, len(batches), n/2, "%v", batches)
	for _, b := range batches {
		assert.LessOrEqual(t, len(b), 2, "a transaction holds at most about 4 MiB of outputs beyond its first: %v", batches)
	}
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.Len(t, rec.Tasks, n+1)
	for i := range n {
		id := "big" + strconv.Itoa(i)
		assert.Equal(t, strconv.Quote(big+id), string(rec.Tasks[id].Output), id)
	}
}

// BenchmarkJournalLargeOutput measures what journaling a task's large
// output costs its host: a [store.Journal] commits one task whose output
// is a string of size bytes, as a worker's output reaches it, on a SQLite
// file. It reports the bytes allocated per byte of the output, on the Go
// heap (SQLite's own copies are outside it).
func BenchmarkJournalLargeOutput(b *testing.B) {
	for _, size := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateRun(ctx, store.Run{ID: "bench"}); err != nil {
				b.Fatal(err)
			}
			j := store.NewJournal(s, "bench")
			out := strings.Repeat("x", size)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			i := 0
			for b.Loop() {
				c := runner.Commit{TaskID: "t" + strconv.Itoa(i%10), Status: runner.TaskDone, Attempts: 1, Output: out, Duration: time.Millisecond}
				i++
				if err := j.Commit(context.Background(), c); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "B/output-B")
		})
	}
}
