package runner_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// A registry worker with a MaxConcurrency of 1 runs one attempt at a time,
// however many places the runner has; the tasks waiting for it start by
// priority, then in plan order.
func ExampleRunner_Run_maxConcurrency() {
	var (
		mu    sync.Mutex
		calls []string
	)
	api := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, req.TaskID)
		return agent.Result{Output: "fetched"}, nil
	})
	reg := registry.New()
	if err := reg.Register("api", registry.Worker{Agent: api, MaxConcurrency: 1}); err != nil {
		fmt.Println(err)
		return
	}
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "page1", "agent": "api"},
  {"id": "page2", "agent": "api"},
  {"id": "token", "agent": "api", "priority": 10}
]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := runner.New(runner.WithRegistry(reg), runner.WithConcurrency(4)).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, calls)
	// Output: completed [token page1 page2]
}
