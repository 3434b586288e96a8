package runner_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// A task whose request would exceed the bound fails at once, without
// calling its agent and without retries; one within it runs.
func TestMaxRequestBytes(t *testing.T) {
	big := strings.Repeat("x", 600)
	for _, tc := range []struct {
		name  string
		limit int64
		sink  mod
		fails bool
	}{
		{"depends over", 1_000, func(*plan.Task) {}, true},
		{"depends within", 2_000, func(*plan.Task) {}, false},
		{"no limit", -1, func(*plan.Task) {}, false},
		{"templates count twice", 2_000, func(tk *plan.Task) { tk.Input = "{{results.a}} {{results.b}}" }, true},
		{"inputs count", 2_000, inputs(map[string]plan.InputRef{"x": {From: "a"}, "y": {From: "b"}}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder().on("a", output(big)).on("b", output(big))
			p := planOf(
				task("a", "in"),
				task("b", "in"),
				task("sink", "in", deps("a", "b"), tc.sink, onFailure(plan.PolicyRetry), retries(3)),
			)
			res := run(t, p, rec, runner.WithMaxRequestBytes(tc.limit))
			tr := res.Tasks["sink"]
			if !tc.fails {
				assert.Equal(t, runner.TaskDone, tr.Status)
				return
			}
			assert.Equal(t, runner.TaskFailed, tr.Status)
			require.ErrorIs(t, tr.Err, runner.ErrRequestTooLarge)
			assert.Contains(t, tr.Err.Error(), `the request of task "sink" is over`)
			assert.Equal(t, 1, tr.Attempts)
			assert.Zero(t, rec.count("sink"), "the agent is not called")
		})
	}
}
