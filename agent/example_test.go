package agent_test

import (
	"context"
	"errors"
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

// A registry holds the workers a plan may name. Preconditions are checked
// before each attempt, with data/input bound to the task's rendered input.
func ExampleNewRegistry() {
	r := agent.NewRegistry()
	err := r.Register("word-count", agent.Worker{
		Description:   "Counts the words of the input",
		Outputs:       []string{"words"},
		Preconditions: []string{`(if (> (count data/input) 0) true "the input is empty")`},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input))}}, nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names(), r.Outputs("word-count"))

	w, _ := r.Lookup("word-count")
	for _, input := range []string{"one two three", ""} {
		req := agent.Request{TaskID: "count", Agent: "word-count", Input: input, Attempt: 1}
		if err := w.Check(context.Background(), req); err != nil {
			fmt.Println(errors.Is(err, agent.ErrPrecondition), err)
			continue
		}
		res, _ := w.Agent.Run(context.Background(), req)
		fmt.Println(res.Output)
	}
	// Output:
	// [word-count] [words]
	// map[words:3]
	// true precondition 1 of worker "word-count" not met: (if (> (count data/input) 0) true "the input is empty"): the input is empty
}

// Register refuses a second worker of the same name.
func ExampleRegistry_Register() {
	r := agent.NewRegistry()
	echo := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: req.Input}, nil
	})
	fmt.Println(r.Register("echo", agent.Worker{Agent: echo}))
	err := r.Register("echo", agent.Worker{Agent: echo})
	fmt.Println(errors.Is(err, agent.ErrDuplicateWorker), err)
	err = r.Register("strict", agent.Worker{Agent: echo, Preconditions: []string{"(strng? data/input)"}})
	fmt.Println(err)
	// Output:
	// <nil>
	// true register worker "echo": a worker of that name is already registered
	// register worker "strict": precondition 1: 1:2: unknown function strng? (did you mean string?)
	//   (strng? data/input)
	//    ^
}

// The CLI reads its registry from a YAML or JSON file; each worker runs as
// a Command.
func ExampleParseRegistry() {
	r, err := agent.ParseRegistry([]byte(`
workers:
  go-vet:
    description: Runs go vet on the packages in params.packages
    command: ["go", "vet", "./..."]
    outputs: [findings]
    timeout: 2m
    env: {GOFLAGS: "-mod=mod"}
`), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := r.Lookup("go-vet")
	cmd := w.Agent.(*agent.Command)
	fmt.Println(w.Description)
	fmt.Println(w.Outputs, w.Timeout, cmd.Argv, cmd.Env)

	_, err = agent.ParseRegistry([]byte("workers:\n  go-vet:\n    comand: [go, vet]\n"), "")
	fmt.Println(errors.Is(err, agent.ErrInvalidRegistry), err)
	// Output:
	// Runs go vet on the packages in params.packages
	// [findings] 2m0s [go vet ./...] [GOFLAGS=-mod=mod]
	// true line 3: worker "go-vet": unknown key "comand"; did you mean "command"?
}
