package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrDuplicateTool: a tool of that name is already registered.
var ErrDuplicateTool = errors.New("a tool of that name is already registered")

// ErrUnknownTool is matched by the error of an LLM agent, or of the factory
// LLMAgents returns, that names a tool the registry does not have.
var ErrUnknownTool = errors.New("unknown tool")

// DefaultToolParameters is the parameters schema of a tool that declares
// none: an object of any arguments.
const DefaultToolParameters = `{"type":"object"}`

// ToolFunc runs a tool with the arguments object the model wrote and
// returns the text the model reads.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// Tool is a function of the host that LLM sub-agents may call. Tools come
// only from the registry: a plan names them, never defines one.
type Tool struct {
	Description string
	// Parameters is the JSON Schema of the arguments object; its "type" must
	// be "object". Empty means DefaultToolParameters. An LLM agent checks
	// the arguments the model writes against it before calling Run, so that
	// Run only ever sees arguments valid for it.
	Parameters json.RawMessage
	// Timeout bounds one call; zero leaves only the attempt's own deadline.
	Timeout time.Duration
	// Run does the work. Command.CallTool makes a program a tool.
	Run ToolFunc
}

// registeredTool is a tool with its compiled parameters schema.
type registeredTool struct {
	Tool
	schema *jsonschema.Schema
}

// toolName is what the OpenAI API, and so most servers, accept as a
// function name.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// RegisterTool adds a tool under name. The name must be 1 to 64 ASCII
// letters, digits, "_" or "-", which is what the OpenAI API accepts as a
// function name; the parameters must be a JSON Schema of an object, and are
// compiled now, so that a mistake shows when the registry is built rather
// than as a refused request in the middle of a run. A schema may not refer
// to schemas outside itself.
func (r *Registry) RegisterTool(name string, t Tool) error {
	if r == nil {
		return fmt.Errorf("register tool %q: the registry is nil; create it with NewRegistry", name)
	}
	if name == "" {
		return errors.New("register tool: the name is empty")
	}
	if !toolName.MatchString(name) {
		return fmt.Errorf(`register tool %q: a tool name must be 1 to 64 ASCII letters, digits, "_" or "-"`, name)
	}
	if t.Run == nil {
		return fmt.Errorf("register tool %q: Run is nil", name)
	}
	if t.Timeout < 0 {
		return fmt.Errorf("register tool %q: the timeout %s is negative", name, t.Timeout)
	}
	params, schema, err := compileParameters(t.Parameters)
	if err != nil {
		return fmt.Errorf("register tool %q: parameters: %w", name, err)
	}
	t.Parameters = params
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

// ToolNames returns the names of the registered tools in sorted order.
func (r *Registry) ToolNames() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.tools))
}

// compileParameters checks that params is the JSON Schema of an object and
// compiles it. It returns the schema compacted, or DefaultToolParameters
// when params is empty.
func compileParameters(params json.RawMessage) (json.RawMessage, *jsonschema.Schema, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(DefaultToolParameters)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, params); err != nil {
		return nil, nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(compact.Bytes(), &top); err != nil || top == nil {
		return nil, nil, fmt.Errorf(`the schema must be a JSON object such as {"type": "object", "properties": {...}}, not %s`, jsonKind(compact.Bytes()))
	}
	var typ any
	if raw, ok := top["type"]; ok {
		_ = json.Unmarshal(raw, &typ)
	}
	if typ != "object" {
		return nil, nil, errors.New(`the schema's "type" must be "object": a tool takes an object of named arguments`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(compact.Bytes()))
	if err != nil {
		return nil, nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "mem:///parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, nil, fmt.Errorf("the schema is not valid: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, nil, fmt.Errorf("the schema is not valid: %s", schemaProblem(err))
	}
	return json.RawMessage(compact.Bytes()), s, nil
}

// noLoader refuses to load schemas from outside the one compiled: a tool's
// schema is configuration, and compiling it reads no files or URLs. The
// JSON Schema meta-schemas are built into the compiler.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema; a tool's schema may not refer to other schemas", url)
}

// validateArgs checks the arguments a model wrote for a tool: a JSON object
// valid for the tool's schema. The error says what is wrong, for the model.
func (t registeredTool) validateArgs(args json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("the arguments are not JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return fmt.Errorf("the arguments must be a JSON object, not %s", jsonKind(args))
	}
	if t.schema == nil {
		return nil
	}
	if err := t.schema.Validate(doc); err != nil {
		return fmt.Errorf("the arguments do not satisfy the tool's parameters schema: %s", schemaProblem(err))
	}
	return nil
}

// schemaProblem flattens an error of the jsonschema package into one line:
// the leaves of a validation error with where they are, without the
// package's URLs.
func schemaProblem(err error) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		err = se.Err
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			// A leaf prints as "at '/path': what is wrong".
			leaves = append(leaves, e.Error())
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(leaves, "; ")
}

// jsonKind says what kind of JSON value data starts with, for messages.
func jsonKind(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
