package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dagent-dev/dagent/internal/schema"
	"github.com/dagent-dev/dagent/registry/internal/toolschema"
)

// ErrDuplicateTool: a tool of that name is already registered.
var ErrDuplicateTool = errors.New("a tool of that name is already registered")

// ErrUnknownTool is matched by errors that name a tool the registry does
// not have: of [Registry.CheckToolArgs], and of an LLM agent (package
// [github.com/dagent-dev/dagent/llmagent]) or its factory that names one.
var ErrUnknownTool = errors.New("unknown tool")

// DefaultToolParameters is the parameters schema of a tool that declares
// none: an object of any arguments.
const DefaultToolParameters = toolschema.DefaultParameters

// ToolFunc runs a tool with the arguments object the model wrote and
// returns the text the model reads.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// Tool is a function of the host that LLM sub-agents may call. Tools come
// only from the registry: a plan names them, never defines one.
type Tool struct {
	Description string
	// Parameters is the JSON Schema of the arguments object; its "type" must
	// be "object". Empty means [DefaultToolParameters]. An LLM agent checks
	// the arguments the model writes against it before calling Run, so that
	// Run only ever sees arguments valid for it.
	Parameters json.RawMessage
	// Timeout bounds one call; zero leaves only the attempt's own deadline.
	Timeout time.Duration
	// MaxConcurrency bounds the calls of the tool that run at once, from
	// every agent that calls it through this registry; zero means no
	// bound. A call waits for a place, as long as its context allows: the
	// wait counts against Timeout. [Registry.LookupTool] returns a Run
	// that keeps the bound.
	MaxConcurrency int
	// Run does the work. [agent.Command.CallTool] makes a program a tool.
	// [Registry.RegisterTool] refuses a tool without one, so the zero Tool
	// is not registrable.
	Run ToolFunc
}

// registeredTool is a tool with its compiled parameters schema.
type registeredTool struct {
	Tool
	schema *schema.Schema
}

// RegisterTool adds a tool under name. The name must be 1 to 64 ASCII
// letters, digits, "_" or "-", which is what the OpenAI API accepts as a
// function name; the parameters must be a JSON Schema of an object, and are
// compiled now, so that a mistake shows when the registry is built rather
// than as a refused request in the middle of a run. A schema may not refer
// to schemas outside itself.
func (r *Registry) RegisterTool(name string, t Tool) error {
	if r == nil {
		return fmt.Errorf("register tool %q: the registry is nil; create it with registry.New", name)
	}
	if name == "" {
		return errors.New("register tool: the name is empty")
	}
	if !toolschema.ValidName(name) {
		return fmt.Errorf(`register tool %q: a tool name must be 1 to 64 ASCII letters, digits, "_" or "-"`, name)
	}
	if t.Run == nil {
		return fmt.Errorf("register tool %q: Run is nil", name)
	}
	if t.Timeout < 0 {
		return fmt.Errorf("register tool %q: the timeout %s is negative", name, t.Timeout)
	}
	if t.MaxConcurrency < 0 {
		return fmt.Errorf("register tool %q: max concurrency %d is negative", name, t.MaxConcurrency)
	}
	params, schema, err := toolschema.Compile(t.Parameters)
	if err != nil {
		return fmt.Errorf("register tool %q: parameters: %w", name, err)
	}
	t.Parameters = params
	if t.MaxConcurrency > 0 {
		t.Run = bounded(t.Run, t.MaxConcurrency)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; ok {
		return fmt.Errorf("register tool %q: %w", name, ErrDuplicateTool)
	}
	if r.tools == nil {
		r.tools = make(map[string]registeredTool)
	}
	r.tools[name] = registeredTool{Tool: t, schema: schema}
	return nil
}

// bounded returns run, of which at most n calls run at once; a call waits
// for a place until ctx ends.
func bounded(run ToolFunc, n int) ToolFunc {
	places := make(chan struct{}, n)
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		select {
		case places <- struct{}{}:
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a place: the tool runs at most %d calls at once: %w", n, context.Cause(ctx))
		}
		defer func() { <-places }()
		return run(ctx, args)
	}
}

// LookupTool returns the tool registered under name. Its Parameters are a
// copy: changing them does not change the registry.
func (r *Registry) LookupTool(name string) (Tool, bool) {
	t, ok := r.lookupTool(name)
	if !ok {
		return Tool{}, false
	}
	t.Parameters = bytes.Clone(t.Parameters)
	return t.Tool, true
}

func (r *Registry) lookupTool(name string) (registeredTool, bool) {
	if r == nil {
		return registeredTool{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// HasTool reports whether a tool is registered under name, so that plan
// validation can check the tools an agent names.
func (r *Registry) HasTool(name string) bool {
	_, ok := r.lookupTool(name)
	return ok
}

// CheckToolArgs checks args, the arguments a model wrote for the tool
// registered under name: a JSON object valid for the tool's parameters
// schema, so that the tool only ever runs on arguments valid for it. The
// error says what is wrong, in words for the model; for a tool that is not
// registered it matches [ErrUnknownTool].
func (r *Registry) CheckToolArgs(name string, args json.RawMessage) error {
	t, ok := r.lookupTool(name)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	return toolschema.ValidateArgs(t.schema, args)
}

// ToolNames returns the names of the registered tools in sorted order.
func (r *Registry) ToolNames() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.tools))
}
