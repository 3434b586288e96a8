//go:build unix

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
)

// A Command runs a program of any language as a worker: the request as JSON
// on standard input, the result on standard output. cat echoes the
// request, so its output is the request as JSON, decoded.
func ExampleCommand() {
	echo := &agent.Command{Argv: []string{"cat"}}
	res, err := echo.Run(context.Background(), agent.Request{TaskID: "greet", Agent: "echo", Input: "hello", Attempt: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := res.Output.(map[string]any)
	fmt.Println(out["task_id"], out["input"], out["attempt"])

	fail := &agent.Command{Argv: []string{"sh", "-c", "echo 'disk full' >&2; exit 3"}}
	_, err = fail.Run(context.Background(), agent.Request{TaskID: "greet"})
	var exit *agent.ExitError
	fmt.Println(errors.As(err, &exit), exit.Code, exit.Stderr)
	// Output:
	// greet hello 1
	// true 3 disk full
}

// CallTool runs a program as a tool of LLM agents: the arguments object on
// standard input, its standard output the text the model reads.
func ExampleCommand_CallTool() {
	search := &agent.Command{Argv: []string{"cat"}}
	text, err := search.CallTool(context.Background(), json.RawMessage(`{"query": "dag"}`))
	fmt.Println(text, err)
	// Output: {"query": "dag"} <nil>
}
