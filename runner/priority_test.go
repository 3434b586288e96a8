package runner_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

func prio(n int) mod { return func(t *plan.Task) { t.Priority = n } }

// startOrder lists the tasks in the order their first attempts came.
func startOrder(rec *recorder) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var ids []string
	for _, q := range rec.reqs {
		if q.Attempt == 1 {
			ids = append(ids, q.TaskID)
		}
	}
	return ids
}

// With one place, the tasks ready at once start by priority, the higher
// first, and in plan order among equals.
func TestPriorityOrder(t *testing.T) {
	tests := []struct {
		name  string
		tasks []plan.Task
		want  []string
	}{
		{
			name:  "no priorities: plan order",
			tasks: []plan.Task{task("a", "in"), task("b", "in"), task("c", "in")},
			want:  []string{"a", "b", "c"},
		},
		{
			name:  "higher first",
			tasks: []plan.Task{task("a", "in"), task("b", "in", prio(2)), task("c", "in", prio(1)), task("d", "in", prio(-1))},
			want:  []string{"b", "c", "a", "d"},
		},
		{
			name:  "ties in plan order",
			tasks: []plan.Task{task("a", "in", prio(1)), task("b", "in"), task("c", "in", prio(1)), task("d", "in"), task("e", "in", prio(1))},
			want:  []string{"a", "c", "e", "b", "d"},
		},
		{
			name: "dependents made ready together",
			tasks: []plan.Task{
				task("root", "in"),
				task("x", "in", deps("root")), task("y", "in", deps("root"), prio(3)), task("z", "in", deps("root"), prio(3)),
			},
			want: []string{"root", "y", "z", "x"},
		},
		{
			name: "priority does not jump dependencies",
			tasks: []plan.Task{
				task("a", "in"), task("b", "in", deps("a"), prio(9)), task("c", "in", prio(1)),
			},
			want: []string{"c", "a", "b"},
		},
	}
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%s", s, tt.name), func(t *testing.T) {
				rec := newRecorder()
				res := run(t, planOf(tt.tasks...), rec, runner.WithSchedule(s), runner.WithConcurrency(1))
				require.Equal(t, runner.StatusCompleted, res.Status)
				assert.Equal(t, tt.want, startOrder(rec))
			})
		}
	}
}

// Priorities order the tasks ready at the time: a higher one that becomes
// ready later does not overtake a task that started, but does overtake
// the tasks still waiting.
func TestPriorityLaterReady(t *testing.T) {
	rec := newRecorder()
	p := planOf(
		task("a", "in"), task("b", "in"), task("c", "in"), task("d", "in"),
		task("late", "in", deps("a"), prio(1)),
	)
	res := run(t, p, rec, runner.WithSchedule(runner.Eager), runner.WithConcurrency(1))
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, []string{"a", "late", "b", "c", "d"}, startOrder(rec))
}

// Many runs of one plan start its tasks in the same order.
func TestPriorityDeterministic(t *testing.T) {
	p := planOf()
	for k := range 40 {
		p.Tasks = append(p.Tasks, task(fmt.Sprintf("t%02d", k), "in", prio(k%4)))
	}
	var first []string
	for range 5 {
		var order []string
		a := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
			order = append(order, req.TaskID) // one place: no two run at once
			return agent.Result{Output: "ok"}, nil
		})
		res, err := runner.New(runner.WithAgent(worker, a), runner.WithConcurrency(1), runner.WithSchedule(runner.Eager)).RunPlan(context.Background(), p)
		require.NoError(t, err)
		require.Equal(t, runner.StatusCompleted, res.Status)
		if first == nil {
			first = order
			assert.Equal(t, []string{"t03", "t07", "t11"}, order[:3])
			continue
		}
		assert.Equal(t, first, order)
	}
}
