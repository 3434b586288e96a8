package temporal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/runner"
)

// Three outputs that fit one by one but not together: the result keeps
// every task's status and the outputs that fit, the largest left out
// with a note, and stays under the payload limit.
func TestWorkflowResultFitsThePayloadLimit(t *testing.T) {
	big := func(c string, n int) agent.Agent { return echo(strings.Repeat(c, n)) }
	e := env(t, workers(t, map[string]agent.Agent{
		"a": big("a", 800<<10), "b": big("b", 800<<10+1), "c": big("c", 800<<10), "small": echo("kept"),
	}))
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "agent": "a", "input": "x"}, {"id": "b", "agent": "b", "input": "x"},
		{"id": "c", "agent": "c", "input": "x"}, {"id": "s", "agent": "small", "input": "x"}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "fits", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	raw, err := json.Marshal(o)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(raw), PayloadLimit)
	assert.Equal(t, omitted(800<<10+3), o.Run.Tasks["b"].Output, "the largest output is left out first")
	assert.Contains(t, o.Run.Tasks["b"].Output, "payload limit of 2097152 bytes")
	for _, id := range []string{"a", "c"} {
		out, _ := o.Run.Tasks[id].Output.(string)
		assert.True(t, out == strings.Repeat(id, 800<<10), "the output of %s fits once b's is left out, and is kept", id)
	}
	assert.Equal(t, "kept", o.Run.Tasks["s"].Output)
	for _, id := range []string{"a", "b", "c", "s"} {
		assert.Equal(t, runner.TaskDone, o.Run.Tasks[id].Status, id)
	}
}

// An output above MaxOutputBytes is invalid output, said with its size
// and the bound, not a failure of the activity's completion.
func TestAttemptRefusesAnOutputAboveTheBound(t *testing.T) {
	e := env(t, workers(t, map[string]agent.Agent{"huge": echo(strings.Repeat("x", 3<<20))}))
	p := mustPlan(t, `{"tasks": [{"id": "a", "agent": "huge", "input": "x"}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "huge", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusFailed, o.Run.Status)
	a := o.Run.Tasks["a"]
	assert.Equal(t, runner.ClassInvalidOutput, a.Class)
	require.Error(t, a.Err)
	assert.Contains(t, a.Err.Error(), "the output is 3145730 bytes as JSON, above the 1572864 bytes a run on Temporal takes")
}

func TestRequestBound(t *testing.T) {
	for in, want := range map[int64]int64{0: MaxOutputBytes, -1: MaxOutputBytes, 200: 200, 64 << 20: MaxOutputBytes} {
		assert.Equal(t, want, requestBound(in), "%d", in)
	}
}

func TestFitFailsCleanlyWhenNothingLargeIsLeft(t *testing.T) {
	res := &runner.Result{RunID: "many", Status: runner.StatusCompleted, Tasks: map[string]*runner.TaskResult{}}
	for i := range 3000 {
		id := fmt.Sprintf("t%d", i)
		res.Tasks[id] = &runner.TaskResult{ID: id, Status: runner.TaskDone, Output: strings.Repeat("o", 900)}
	}
	out, err := fit(&Outcome{Run: res})
	assert.Nil(t, out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "above Temporal's payload limit of 2097152 bytes")
}
