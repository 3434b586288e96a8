package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/internal/plantest"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

var noop = agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
	return agent.Result{Output: "ok"}, nil
})

// BenchmarkJournal measures what journaling adds per task: a no-op plan
// run without a journal and with one (CreateRun, a commit per task, the
// events, the status) alternately in the same benchmark run, on a SQLite
// file. The plans are layered (10 layers, each task depending on two of
// the layer before), whose tasks settle together, and a chain, whose
// tasks settle one at a time. It reports both costs per task
// (base-µs/task, journaled-µs/task), what the journal adds (µs/task) and
// the ratio.
func BenchmarkJournal(b *testing.B) {
	layered := func(n int) *plan.Plan { return plantest.Layered(10, n/10, "noop") }
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, n := range []int{100, 1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/%d", sched, n), func(b *testing.B) { benchJournal(b, sched, layered(n)) })
		}
	}
	// The cost of durability against power loss too.
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("eager/%d/fullsync", n), func(b *testing.B) {
			benchJournal(b, runner.Eager, layered(n), sqlite.WithFullSync())
		})
	}
	// Tasks that settle one at a time have no commit to share.
	b.Run("chain/1000", func(b *testing.B) { benchJournal(b, runner.Eager, plantest.Chain(1_000, "noop")) })
	b.Run("chain/1000/fullsync", func(b *testing.B) {
		benchJournal(b, runner.Eager, plantest.Chain(1_000, "noop"), sqlite.WithFullSync())
	})
}

func benchJournal(b *testing.B, sched runner.Schedule, p *plan.Plan, opts ...sqlite.Option) {
	n := len(p.Tasks)
	canon, err := p.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	plain := runner.New(runner.WithAgent("noop", noop), runner.WithSchedule(sched))
	var base, journaled time.Duration
	runs := 0
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		res, err := plain.RunPlan(ctx, p)
		if err != nil || res.Status != runner.StatusCompleted {
			b.Fatal(err, res.Status)
		}
		base += time.Since(start)

		id := "bench-" + strconv.Itoa(runs)
		runs++
		start = time.Now()
		if err := s.CreateRun(ctx, store.Run{ID: id, Plan: canon, TaskCount: n}); err != nil {
			b.Fatal(err)
		}
		j := store.NewJournal(s, id)
		rn := runner.New(runner.WithAgent("noop", noop), runner.WithSchedule(sched),
			runner.WithJournal(j), runner.WithObserver(j))
		res, err = rn.RunPlan(ctx, p, runner.WithRunID(id))
		if err != nil || res.Status != runner.StatusCompleted {
			b.Fatal(err, res.Status)
		}
		journaled += time.Since(start)
		if err := j.Err(); err != nil {
			b.Fatal(err)
		}
	}
	perTask := func(d time.Duration) float64 { return float64(d) / 1e3 / float64(runs) / float64(n) }
	b.ReportMetric(perTask(base), "base-µs/task")
	b.ReportMetric(perTask(journaled), "journaled-µs/task")
	b.ReportMetric(perTask(journaled)-perTask(base), "µs/task")
	b.ReportMetric(float64(journaled)/float64(base), "ratio")
}
