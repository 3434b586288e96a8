package durable_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/store"
)

// benchRuns is how many runs the journal of BenchmarkList holds.
const benchRuns = 10_000

// BenchmarkList measures listing the first page of 50 runs of a journal
// of 10,000, all of them and those of one status — failed, which the
// journal holds, and interrupted, which liveness decides — as a caller did
// before there was a paged query (go: every summary from [store.Store.List],
// the status shown and the page decided in Go) and with [durable.List].
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	s := listJournal(b)
	for _, tc := range []struct {
		name     string
		statuses []durable.Status
	}{
		{"all", nil},
		{"failed", []durable.Status{durable.StatusFailed}},
		{"interrupted", []durable.Status{durable.StatusInterrupted}},
	} {
		b.Run(tc.name+"/go", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				all, err := s.List(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var page []store.Summary
				for _, r := range all {
					if len(page) == 50 {
						break
					}
					if len(tc.statuses) == 0 || slices.Contains(tc.statuses, shownInGo(r)) {
						page = append(page, r)
					}
				}
				if len(page) != 50 {
					b.Fatalf("%d runs on the page", len(page))
				}
			}
		})
		b.Run(tc.name+"/sql", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, err := durable.List(ctx, s, durable.Query{Statuses: tc.statuses, Limit: 50})
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Runs) != 50 || page.Total < 50 {
					b.Fatalf("%d runs on the page, %d in all", len(page.Runs), page.Total)
				}
			}
		})
	}
}

// shownInGo is the status of r as the CLI showed it, deciding liveness
// for every run.
func shownInGo(r store.Summary) durable.Status {
	live := r.Owner != nil && durable.Alive(*r.Owner, durable.DefaultStaleAfter)
	if r.Status == store.StatusRunning && !live {
		return durable.StatusInterrupted
	}
	return durable.Status(r.Status)
}

// listJournal is a journal of benchRuns runs of a 5-task plan, one a
// minute: of every 10, 6 completed, 2 failed, 1 waiting and 1 running,
// whose process is alive for one run in 4 and died for the others; each
// with its tasks committed as far as its status goes.
func listJournal(b *testing.B) *store.SQLite {
	b.Helper()
	ctx := context.Background()
	s, err := store.Open(filepath.Join(b.TempDir(), "dagent.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	canon, err := plantest.Chain(5, "work").Canonical()
	if err != nil {
		b.Fatal(err)
	}
	host, _ := os.Hostname()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []durable.Status{"completed", "completed", "completed", "failed", "completed", "waiting", "completed", "failed", "running", "completed"}
	for i := range benchRuns {
		id := fmt.Sprintf("r%05d", i)
		if err := s.CreateRun(ctx, store.Run{ID: id, Plan: canon, TaskCount: 5, Mission: "mission " + id, Created: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			b.Fatal(err)
		}
		status := statuses[i%len(statuses)]
		var batch store.Batch
		for k := range 5 {
			if status == durable.StatusRunning && k >= 2 {
				break
			}
			st := "done"
			if status == durable.StatusFailed && k == 4 {
				st = "failed"
			}
			batch.Tasks = append(batch.Tasks, store.Task{ID: fmt.Sprint("t", k), Status: st, Attempts: 1, Output: []byte(`"ok"`)})
			batch.Events = append(batch.Events, store.Event{Kind: "task_finished", TaskID: fmt.Sprint("t", k)})
		}
		if err := s.CommitBatch(ctx, id, batch); err != nil {
			b.Fatal(err)
		}
		if status != durable.StatusRunning {
			if err := s.SetStatus(ctx, id, string(status), ""); err != nil {
				b.Fatal(err)
			}
			continue
		}
		pid := os.Getppid() // alive
		if (i/10)%4 != 0 {
			pid = 1 << 22 // above any pid this host gives: dead
		}
		if err := s.Acquire(ctx, id, store.Owner{ID: id, PID: pid, Host: host, Started: time.Now(), Heartbeat: time.Now()}, nil); err != nil {
			b.Fatal(err)
		}
	}
	return s
}
