package durable_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

var noop = agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
	return agent.Result{Output: "ok"}, nil
})

// BenchmarkStart measures what journaling adds per task to a whole
// durable run — creating the run with its plan, taking its lease, a
// commit per task, the events, the status — by starting a no-op layered
// plan (10 layers, each task depending on two of the layer before) without
// a store and on a SQLite file, alternately in the same benchmark run. It
// reports both costs per task (base-µs/task, journaled-µs/task), what the
// journal adds (µs/task) and the ratio.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		p := plantest.Layered(10, n/10, "noop")
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchStart(b, p) })
		b.Run(fmt.Sprintf("%d/fullsync", n), func(b *testing.B) { benchStart(b, p, sqlite.WithFullSync()) })
	}
}

func benchStart(b *testing.B, p *plan.Plan, opts ...sqlite.Option) {
	ctx := context.Background()
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "dagent.db"), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := func(s store.Store, id string) time.Duration {
		t0 := time.Now()
		out, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("noop", noop), durable.WithRunID(id))
		if err != nil || out.Status != durable.StatusCompleted {
			b.Fatal(err, out)
		}
		return time.Since(t0)
	}
	var base, journaled time.Duration
	runs := 0
	b.ReportAllocs()
	for b.Loop() {
		base += start(nil, "base")
		journaled += start(s, "bench-"+strconv.Itoa(runs))
		runs++
	}
	perTask := func(d time.Duration) float64 { return float64(d) / 1e3 / float64(runs) / float64(len(p.Tasks)) }
	b.ReportMetric(perTask(base), "base-µs/task")
	b.ReportMetric(perTask(journaled), "journaled-µs/task")
	b.ReportMetric(perTask(journaled)-perTask(base), "µs/task")
	b.ReportMetric(float64(journaled)/float64(base), "ratio")
}
