package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/registry"
)

// A registry holds the workers a plan may name. Preconditions are checked
// before each attempt, with data/input bound to the task's rendered input.
func ExampleNew() {
	r := registry.New()
	err := r.Register("word-count", registry.Worker{
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
			fmt.Println(errors.Is(err, registry.ErrPrecondition), err)
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
	r := registry.New()
	echo := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: req.Input}, nil
	})
	fmt.Println(r.Register("echo", registry.Worker{Agent: echo}))
	err := r.Register("echo", registry.Worker{Agent: echo})
	fmt.Println(errors.Is(err, registry.ErrDuplicateWorker), err)
	err = r.Register("strict", registry.Worker{Agent: echo, Preconditions: []string{"(strng? data/input)"}})
	fmt.Println(err)
	// Output:
	// <nil>
	// true register worker "echo": a worker of that name is already registered
	// register worker "strict": precondition 1: 1:2: unknown function strng? (did you mean string?)
	//   (strng? data/input)
	//    ^
}

// An LLM agent checks the arguments a model wrote with CheckToolArgs
// before it runs the tool, so that the tool only sees valid arguments.
func ExampleRegistry_CheckToolArgs() {
	r := registry.New()
	err := r.RegisterTool("search", registry.Tool{
		Description: "Searches the docs",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}`),
		Run:         func(ctx context.Context, args json.RawMessage) (string, error) { return "no match", nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.CheckToolArgs("search", json.RawMessage(`{"query": "dag"}`)))
	fmt.Println(r.CheckToolArgs("search", json.RawMessage(`{"q": "dag"}`)))
	err = r.CheckToolArgs("fetch", json.RawMessage(`{}`))
	fmt.Println(errors.Is(err, registry.ErrUnknownTool), err)
	// Output:
	// <nil>
	// the arguments do not satisfy the tool's parameters schema: at /: missing property 'query'
	// true unknown tool "fetch"
}

// HasTool tells plan validation which tools an agent may name.
func ExampleRegistry_HasTool() {
	r := registry.New()
	search := func(ctx context.Context, args json.RawMessage) (string, error) { return "", nil }
	if err := r.RegisterTool("search", registry.Tool{Run: search}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.HasTool("search"), r.HasTool("fetch"))
	// Output: true false
}

// WorkerOutputs tells plan validation, in one look-up, whether a task's
// agent is a worker and which slots its output has.
func ExampleRegistry_WorkerOutputs() {
	r := registry.New()
	noop := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) { return agent.Result{}, nil })
	_ = r.Register("scraper", registry.Worker{Agent: noop, Outputs: []string{"items", "count"}})
	_ = r.Register("notify", registry.Worker{Agent: noop})
	for _, name := range []string{"scraper", "notify", "writer"} {
		slots, ok := r.WorkerOutputs(name)
		fmt.Println(name, slots, ok)
	}
	// Output:
	// scraper [items count] true
	// notify [] true
	// writer [] false
}

// RegisterTool adds a function of the host that LLM agents may call; its
// parameters schema must describe an object. LookupTool finds it again.
func ExampleRegistry_RegisterTool() {
	r := registry.New()
	err := r.RegisterTool("search", registry.Tool{
		Description: "Searches the docs",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {"query": {"type": "string"}}}`),
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			return "2 passages match " + string(args), nil
		},
	})
	fmt.Println(err)
	fmt.Println(r.RegisterTool("lookup", registry.Tool{
		Parameters: json.RawMessage(`{"type": "string"}`),
		Run:        func(ctx context.Context, args json.RawMessage) (string, error) { return "", nil },
	}))
	fmt.Println(r.RegisterTool("fetch", registry.Tool{}))

	t, ok := r.LookupTool("search")
	text, err := t.Run(context.Background(), json.RawMessage(`{"query": "dag"}`))
	fmt.Println(ok, r.ToolNames(), text, err)
	// Output:
	// <nil>
	// register tool "lookup": parameters: the schema's "type" must be "object": a tool takes an object of named arguments
	// register tool "fetch": Run is nil
	// true [search] 2 passages match {"query": "dag"} <nil>
}

// CheckProgram tells whether a worker's program can be started here,
// before a run would fail every attempt of its tasks.
func ExampleRegistry_CheckProgram() {
	r := registry.New()
	_ = r.Register("shell", registry.Worker{Agent: &agent.Command{Argv: []string{"sh", "-c", "cat"}}})
	_ = r.Register("typo", registry.Worker{Agent: &agent.Command{Argv: []string{"dagent-no-such-program"}}})
	fmt.Println(r.CheckProgram("shell"))
	err := r.CheckProgram("typo")
	fmt.Println(errors.Is(err, registry.ErrNoProgram), err)
	// Output:
	// <nil>
	// true worker "typo": program not found: exec: "dagent-no-such-program": executable file not found in $PATH
}

func ExampleWorker_CheckOutput() {
	r := registry.New()
	_ = r.Register("list-files", registry.Worker{
		Agent:   &agent.Command{Argv: []string{"ls"}},
		Outputs: []string{"files"},
	})
	w, _ := r.Lookup("list-files")
	fmt.Println(w.CheckOutput(map[string]any{"files": []any{"a.go"}}))
	err := w.CheckOutput("a.go\nb.go")
	fmt.Println(errors.Is(err, agent.ErrInvalidOutput))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// invalid output: worker "list-files" declares outputs files and must print one JSON object on standard output; it printed text: "a.go\nb.go"
}

// CheckPrograms checks every worker at once, as a host does when it loads
// a registry to run plans on.
func ExampleRegistry_CheckPrograms() {
	r := registry.New()
	_ = r.Register("shell", registry.Worker{Agent: &agent.Command{Argv: []string{"sh", "-c", "cat"}}})
	_ = r.Register("typo", registry.Worker{Agent: &agent.Command{Argv: []string{"dagent-no-such-program"}}})
	err := r.CheckPrograms()
	fmt.Println(errors.Is(err, registry.ErrNoProgram))
	fmt.Println(err)
	// Output:
	// true
	// worker "typo": program not found: exec: "dagent-no-such-program": executable file not found in $PATH
}
