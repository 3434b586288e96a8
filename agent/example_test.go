package agent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/agent"
)

// A Go function becomes an agent with Func.
func ExampleFunc() {
	upper := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: strings.ToUpper(req.Input)}, nil
	})
	res, err := upper.Run(context.Background(), agent.Request{TaskID: "shout", Input: "hello", Attempt: 1})
	fmt.Println(res.Output, err)
	// Output: HELLO <nil>
}
