package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noopTool(context.Context, json.RawMessage) (string, error) { return "", nil }

func TestRegisterToolErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params string
		tool   Tool
		want   string
	}{
		{name: "", want: "register tool: the name is empty"},
		{name: "web search", want: `register tool "web search": a tool name must be 1 to 64 ASCII letters, digits, "_" or "-"`},
		{name: "web.search", want: `register tool "web.search": a tool name must be 1 to 64 ASCII letters, digits, "_" or "-"`},
		{name: strings.Repeat("a", 65), want: `register tool "` + strings.Repeat("a", 65) + `": a tool name must be 1 to 64 ASCII letters, digits, "_" or "-"`},
		{name: "t", tool: Tool{}, want: `register tool "t": Run is nil`},
		{name: "t", tool: Tool{Run: noopTool, Timeout: -time.Second}, want: `register tool "t": the timeout -1s is negative`},
		{name: "t", tool: Tool{Run: noopTool, MaxConcurrency: -2}, want: `register tool "t": max concurrency -2 is negative`},
		{name: "t", params: `{"type":`, want: `register tool "t": parameters: the schema is not JSON: unexpected end of JSON input`},
		{name: "t", params: `[{"type": "object"}]`, want: `register tool "t": parameters: the schema must be a JSON object such as {"type": "object", "properties": {...}}, not an array`},
		{name: "t", params: `null`, want: `register tool "t": parameters: the schema must be a JSON object such as {"type": "object", "properties": {...}}, not null`},
		{name: "t", params: `{"type": "string"}`, want: `register tool "t": parameters: the schema's "type" must be "object": a tool takes an object of named arguments`},
		{name: "t", params: `{"properties": {}}`, want: `register tool "t": parameters: the schema's "type" must be "object": a tool takes an object of named arguments`},
		{name: "t", params: `{"type": ["object", "null"]}`, want: `register tool "t": parameters: the schema's "type" must be "object": a tool takes an object of named arguments`},
		{name: "t", params: `{"type": "object", "properties": {"n": {"type": "int"}}}`, want: `register tool "t": parameters: the schema is not valid: at /properties/n/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'; at /properties/n/type: got string, want array`},
		{name: "t", params: `{"type": "object", "required": "n"}`, want: `register tool "t": parameters: the schema is not valid: at /required: got string, want array`},
		{name: "t", params: `{"type": "object", "$ref": "https://example.com/s.json"}`, want: `register tool "t": parameters: the schema is not valid: failing loading "https://example.com/s.json": https://example.com/s.json is outside the schema; a schema may not refer to other documents`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			tool := tt.tool
			if tt.params != "" {
				tool = Tool{Run: noopTool, Parameters: json.RawMessage(tt.params)}
			}
			r := New()
			assert.EqualError(t, r.RegisterTool(tt.name, tool), tt.want)
			assert.Empty(t, r.ToolNames())
		})
	}
}

func TestRegisterTool(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.RegisterTool("plain", Tool{Run: noopTool}))
	require.NoError(t, r.RegisterTool(strings.Repeat("x", 64), Tool{Run: noopTool}))
	require.NoError(t, r.RegisterTool("search_v2", Tool{
		Description: "Searches",
		Parameters: json.RawMessage(`{
			"type": "object",
			"properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 50}},
			"required": ["query"],
			"$defs": {"x": {"type": "string"}}
		}`),
		Timeout: time.Minute,
		Run:     noopTool,
	}))
	err := r.RegisterTool("plain", Tool{Run: noopTool})
	require.ErrorIs(t, err, ErrDuplicateTool)
	assert.EqualError(t, err, `register tool "plain": a tool of that name is already registered`)
	assert.Equal(t, []string{"plain", "search_v2", strings.Repeat("x", 64)}, r.ToolNames())

	plain, ok := r.LookupTool("plain")
	require.True(t, ok)
	assert.Equal(t, DefaultToolParameters, string(plain.Parameters))

	s, ok := r.LookupTool("search_v2")
	require.True(t, ok)
	assert.Equal(t, "Searches", s.Description)
	assert.Equal(t, time.Minute, s.Timeout)
	// Compacted, keys in the order written.
	assert.Equal(t, `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","maximum":50}},"required":["query"],"$defs":{"x":{"type":"string"}}}`, string(s.Parameters))
	s.Parameters[0] = 'X'
	again, _ := r.LookupTool("search_v2")
	assert.Equal(t, byte('{'), again.Parameters[0], "LookupTool returns a copy")

	_, ok = r.LookupTool("missing")
	assert.False(t, ok)

	var nilReg *Registry
	_, ok = nilReg.LookupTool("plain")
	assert.False(t, ok)
	assert.Nil(t, nilReg.ToolNames())
	assert.EqualError(t, nilReg.RegisterTool("t", Tool{Run: noopTool}), `register tool "t": the registry is nil; create it with registry.New`)
}

func TestValidateArgs(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.RegisterTool("t", Tool{Run: noopTool, Parameters: json.RawMessage(`{
		"type": "object",
		"properties": {"n": {"type": "integer", "minimum": 1}, "tags": {"type": "array", "items": {"type": "string"}}},
		"required": ["n"],
		"additionalProperties": false
	}`)}))
	tests := []struct{ args, want string }{
		{`{"n": 1}`, ""},
		{`{"n": 12345678901234567890, "tags": ["a"]}`, ""},
		{`{"n": 0}`, "the arguments do not satisfy the tool's parameters schema: at /n: minimum: got 0, want 1"},
		{`{"n": 1, "tags": [1]}`, "the arguments do not satisfy the tool's parameters schema: at /tags/0: got number, want string"},
		{`{"n": 1, "x": 2}`, "the arguments do not satisfy the tool's parameters schema: at /: additional properties 'x' not allowed"},
		{`{}`, "the arguments do not satisfy the tool's parameters schema: at /: missing property 'n'"},
		{`"n"`, "the arguments must be a JSON object, not a string"},
		{`{"n": 1} {}`, "the arguments are not JSON: trailing data after the JSON value"},
	}
	for _, tt := range tests {
		err := r.CheckToolArgs("t", json.RawMessage(tt.args))
		if tt.want == "" {
			assert.NoError(t, err, tt.args)
			continue
		}
		assert.EqualError(t, err, tt.want, tt.args)
	}
}

func TestHasTool(t *testing.T) {
	t.Parallel()
	r := New()
	require.NoError(t, r.RegisterTool("search", Tool{Run: noopTool}))
	require.NoError(t, r.Register("search_worker", Worker{Agent: okAgent}))
	var nilReg *Registry
	tests := []struct {
		name string
		reg  *Registry
		tool string
		want bool
	}{
		{"registered", r, "search", true},
		{"not registered", r, "fetch", false},
		{"a worker is not a tool", r, "search_worker", false},
		{"nil registry", nilReg, "search", false},
		{"zero registry", &Registry{}, "search", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.reg.HasTool(tt.tool))
		})
	}
}

func TestCheckToolArgsUnknownTool(t *testing.T) {
	t.Parallel()
	var nilReg *Registry
	for _, r := range []*Registry{New(), nilReg} {
		err := r.CheckToolArgs("fetch", json.RawMessage(`{}`))
		require.ErrorIs(t, err, ErrUnknownTool)
		assert.EqualError(t, err, `unknown tool "fetch"`)
	}
}
