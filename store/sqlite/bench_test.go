package sqlite_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// BenchmarkCommitTask measures one durable task commit on a SQLite file: a
// new task's first state (insert) and a task's later state (replace).
func BenchmarkCommitTask(b *testing.B) {
	for _, mode := range []string{"insert", "replace"} {
		b.Run(mode, func(b *testing.B) {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateRun(ctx, store.Run{ID: "bench"}); err != nil {
				b.Fatal(err)
			}
			out := []byte(`{"text":"a small output of a task","n":42}`)
			i := 0
			for b.Loop() {
				id := "t" + strconv.Itoa(i)
				if mode == "replace" {
					id = "t" + strconv.Itoa(i%100)
				}
				i++
				if err := s.CommitTask(ctx, "bench", store.Task{ID: id, Status: "done", Attempts: 1, Output: out}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCommitBatch measures a durable batch on a SQLite file: n new
// task states, each with the two events a task's run appends, in one
// transaction. It reports the cost per task.
func BenchmarkCommitBatch(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateRun(ctx, store.Run{ID: "bench"}); err != nil {
				b.Fatal(err)
			}
			out := []byte(`{"text":"a small output of a task","n":42}`)
			data := []byte(`{"attempt":1,"duration_ns":1200}`)
			i := 0
			for b.Loop() {
				var batch store.Batch
				for range n {
					id := "t" + strconv.Itoa(i)
					i++
					batch.Tasks = append(batch.Tasks, store.Task{ID: id, Status: "done", Attempts: 1, Output: out})
					batch.Events = append(batch.Events,
						store.Event{Kind: "task_started", TaskID: id, Time: time.Now(), Data: data},
						store.Event{Kind: "task_finished", TaskID: id, Time: time.Now(), Data: data})
				}
				if err := s.CommitBatch(ctx, "bench", batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N)/float64(n), "µs/task")
		})
	}
}
