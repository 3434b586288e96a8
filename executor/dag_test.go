package executor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var echo = agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
	return agent.Result{Output: req.Input}, nil
})

// ExecuteDAG runs a plan checked already, as Execute runs the plan, and
// refuses a DAG that holds problems as Execute refuses the plan.
func TestExecuteDAG(t *testing.T) {
	good, err := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "echo", "input": "x"}, {"id": "b", "agent": "echo", "input": "y", "depends_on": ["a"]}]}`))
	require.NoError(t, err)
	d, err := good.DAG(plan.WithWorkers("echo"))
	require.NoError(t, err)
	res, err := executor.ExecuteDAG(context.Background(), d, "echo twice", executor.WithAgent("echo", echo))
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "y", res.Tasks["b"].Output)

	bad, err := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "grep", "input": "x"}]}`))
	require.NoError(t, err)
	d, err = bad.DAG(plan.WithWorkers("echo"))
	require.Error(t, err)
	require.NotNil(t, d, "the structure is sound: the DAG holds the problem")
	_, err = executor.ExecuteDAG(context.Background(), d, "echo", executor.WithAgent("echo", echo))
	var refused *executor.RefusedError
	require.ErrorAs(t, err, &refused)
	_, err = executor.Execute(context.Background(), bad, "echo", executor.WithAgent("echo", echo))
	var again *executor.RefusedError
	require.ErrorAs(t, err, &again)
	assert.Equal(t, again.Report.Issues, refused.Report.Issues, "refused as Execute refuses the plan")
}

// A host that checked the plan itself — to report its problems its own
// way — hands the executor the DAG, which is not checked again.
func ExampleExecuteDAG() {
	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "greet", "agent": "echo", "input": "hello"}]}`))
	d, err := p.DAG(plan.WithWorkers("echo"))
	if err != nil {
		fmt.Println(plan.Problems(err))
		return
	}
	res, err := executor.ExecuteDAG(context.Background(), d, "greet", executor.WithAgent("echo", echo))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Tasks["greet"].Output)
	// Output: completed hello
}
