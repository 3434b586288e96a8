package runner_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/internal/plantest"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"golang.org/x/sync/errgroup"
)

var noop = agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
	return agent.Result{Output: "ok"}, nil
})

// BenchmarkSchedule measures the scheduling overhead per task of a layered
// DAG of no-op tasks (10 layers, each task depending on two of the layer
// before) for both schedules, beside reference: a plain dependency-counting
// scheduler that runs the same agent with a goroutine per task under a
// semaphore of the runner's default concurrency. The runner runs the plan
// checked once, as a plan run again is; BenchmarkValidate measures the check.
func BenchmarkSchedule(b *testing.B) {
	for _, s := range []string{"phased", "eager", "reference"} {
		for _, n := range []int{100, 1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/%d", s, n), func(b *testing.B) {
				p := plantest.Layered(10, n/10, "noop")
				run := func() error { return reference(context.Background(), p, noop, runner.DefaultConcurrency) }
				if s != "reference" {
					sched, _ := runner.ParseSchedule(s)
					rn := runner.New(runner.WithAgent("noop", noop), runner.WithSchedule(sched))
					d, err := rn.Check(p)
					if err != nil {
						b.Fatal(err)
					}
					run = func() error {
						res, err := rn.Run(context.Background(), d)
						if err == nil && res.Status != runner.StatusCompleted {
							err = fmt.Errorf("run %s: %w", res.Status, res.Err)
						}
						return err
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
			})
		}
	}
}

// BenchmarkValidate measures checking the plans of BenchmarkSchedule, which
// RunPlan does before running.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			p := plantest.Layered(10, n/10, "noop")
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Validate(plan.WithWorkers("noop")); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
		})
	}
}

// reference runs p on a with a plain dependency-counting scheduler: a
// goroutine per ready task under a semaphore of limit, each task's
// dependents started when their last dependency finishes. It is the floor
// the runner's overhead is measured against.
func reference(ctx context.Context, p *plan.Plan, a agent.Agent, limit int) error {
	n := len(p.Tasks)
	index := make(map[string]int, n)
	for i := range p.Tasks {
		index[p.Tasks[i].ID] = i
	}
	waits := make([]int32, n)
	next := make([][]int, n)
	for i := range p.Tasks {
		for _, d := range p.Tasks[i].DependsOn {
			j := index[d]
			next[j] = append(next[j], i)
			waits[i]++
		}
	}
	outputs := make([]any, n)
	sem := make(chan struct{}, limit)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	var start func(i int)
	start = func(i int) {
		wg.Go(func() {
			sem <- struct{}{}
			res, err := a.Run(ctx, agent.Request{TaskID: p.Tasks[i].ID, Input: p.Tasks[i].Input})
			<-sem
			if err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
				return
			}
			outputs[i] = res.Output
			for _, j := range next[i] {
				if atomic.AddInt32(&waits[j], -1) == 0 {
					start(j)
				}
			}
		})
	}
	for i := range waits {
		if waits[i] == 0 {
			start(i)
		}
	}
	wg.Wait()
	return first
}

// sleeper sleeps each task's params.ms milliseconds.
var sleeper = agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
	ms, _ := strconv.Atoi(fmt.Sprint(req.Params["ms"]))
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return agent.Result{Output: "ok"}, nil
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
})

// skewed is 100 tasks in 5 layers, most of 10 ms and some of 200 ms, each
// depending on one to three tasks of the layer before; it returns the plan
// and its critical path.
func skewed(seed uint64) (*plan.Plan, time.Duration) {
	rng := rand.New(rand.NewPCG(seed, seed))
	const layers, width = 5, 20
	p := &plan.Plan{}
	finish := map[string]time.Duration{}
	var critical time.Duration
	for l := range layers {
		for k := range width {
			id := "t" + strconv.Itoa(l) + "_" + strconv.Itoa(k)
			ms := 10
			if rng.IntN(10) == 0 {
				ms = 200
			}
			t := plan.NewTask(id, "work")
			t.Agent = "sleep"
			t.Params = map[string]any{"ms": ms}
			var start time.Duration
			if l > 0 {
				for range 1 + rng.IntN(3) {
					d := "t" + strconv.Itoa(l-1) + "_" + strconv.Itoa(rng.IntN(width))
					if !contains(t.DependsOn, d) {
						t.DependsOn = append(t.DependsOn, d)
						start = max(start, finish[d])
					}
				}
			}
			finish[id] = start + time.Duration(ms)*time.Millisecond
			critical = max(critical, finish[id])
			p.Tasks = append(p.Tasks, t)
		}
	}
	return p, critical
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// BenchmarkSkewed reports makespan/critical-path on a skewed DAG, where
// Eager should reach the critical path and Phased waits for each phase's
// slowest task.
func BenchmarkSkewed(b *testing.B) {
	p, critical := skewed(42)
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		b.Run(s.String(), func(b *testing.B) {
			rn := runner.New(runner.WithAgent("sleep", sleeper), runner.WithSchedule(s), runner.WithConcurrency(100))
			for b.Loop() {
				res, err := rn.RunPlan(context.Background(), p)
				if err != nil || res.Status != runner.StatusCompleted {
					b.Fatal(err, res.Status)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(critical), "makespan/critical-path")
		})
	}
}

// BenchmarkFanOut reports the makespan of one root, 1,000 children of 5 ms
// and a join, over the floor ceil(1000/limit) × 5 ms, beside a plain
// errgroup loop over the children as the baseline.
func BenchmarkFanOut(b *testing.B) {
	const children = 1000
	const work = 5 * time.Millisecond
	p := &plan.Plan{}
	root := plan.NewTask("root", "start")
	root.Agent = "sleep"
	root.Params = map[string]any{"ms": 0}
	join := plan.NewTask("join", "join")
	join.Agent = "sleep"
	join.Params = map[string]any{"ms": 0}
	p.Tasks = append(p.Tasks, root)
	for k := range children {
		t := plan.NewTask("c"+strconv.Itoa(k), "work")
		t.Agent = "sleep"
		t.Params = map[string]any{"ms": 5}
		t.DependsOn = []string{"root"}
		join.DependsOn = append(join.DependsOn, t.ID)
		p.Tasks = append(p.Tasks, t)
	}
	p.Tasks = append(p.Tasks, join)
	for _, limit := range []int{10, 100} {
		floor := time.Duration(math.Ceil(float64(children)/float64(limit))) * work
		for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
			b.Run(fmt.Sprintf("%s/limit=%d", s, limit), func(b *testing.B) {
				rn := runner.New(runner.WithAgent("sleep", sleeper), runner.WithSchedule(s), runner.WithConcurrency(limit))
				for b.Loop() {
					res, err := rn.RunPlan(context.Background(), p)
					if err != nil || res.Status != runner.StatusCompleted {
						b.Fatal(err, res.Status)
					}
				}
				b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(floor), "makespan/floor")
			})
		}
		// The baseline runs the same agent on a plain errgroup loop.
		b.Run(fmt.Sprintf("errgroup/limit=%d", limit), func(b *testing.B) {
			req := agent.Request{Params: map[string]any{"ms": 5}}
			for b.Loop() {
				var g errgroup.Group
				g.SetLimit(limit)
				for range children {
					g.Go(func() error { _, err := sleeper.Run(context.Background(), req); return err })
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(floor), "makespan/floor")
		})
	}
}

// BenchmarkFanInRequest measures what a sink costs its host in memory on
// top of its dependencies' outputs: 20 upstream tasks of size bytes each
// feed one sink run by a command that reads its request and drops it. It
// reports the bytes allocated per byte of the outputs, from building the
// sink's request to writing it to the program.
func BenchmarkFanInRequest(b *testing.B) {
	const width = 20
	sh, err := exec.LookPath("sh")
	if err != nil {
		b.Skip("no sh to run the sink")
	}
	sink := &agent.Command{Argv: []string{sh, "-c", "cat >/dev/null"}}
	for _, size := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dx%dMB", width, size>>20), func(b *testing.B) {
			out := strings.Repeat("x", size)
			up := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
				return agent.Result{Output: out}, nil
			})
			tasks := make([]plan.Task, 0, width+1)
			ids := make([]string, 0, width)
			for i := range width {
				ids = append(ids, "up"+strconv.Itoa(i))
				tasks = append(tasks, plan.NewTask(ids[i], "in"))
				tasks[i].Agent = "up"
			}
			last := plan.NewTask("sink", "sum")
			last.Agent, last.DependsOn = "sink", ids
			tasks = append(tasks, last)
			rn := runner.New(runner.WithAgent("up", up), runner.WithAgent("sink", sink))
			d, err := rn.Check(&plan.Plan{Tasks: tasks})
			if err != nil {
				b.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				res, err := rn.Run(context.Background(), d)
				if err != nil || res.Status != runner.StatusCompleted {
					b.Fatalf("run %v: %v %v", res.Status, err, res.Err)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(width*size), "B/output-B")
		})
	}
}
