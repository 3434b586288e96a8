package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/schema"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not JSON", `{"type":`, "not JSON: "},
		{"type not a type", `{"type": 12}`, "at /type: "},
		{"bad type name", `{"type": "object", "properties": {"n": {"type": "int"}}}`, "at /properties/n/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'; at /properties/n/type: got string, want array"},
		{"required not a list", `{"type": "object", "required": "n"}`, "at /required: got string, want array"},
		{"bad regex pattern", `{"type": "string", "pattern": "("}`, "at /pattern: "},
		{"external ref", `{"$ref": "https://example.com/schema.json"}`, `failing loading "https://example.com/schema.json": https://example.com/schema.json is outside the schema; a schema may not refer to other documents`},
		{"relative ref", `{"type": "object", "$ref": "other.json"}`, `failing loading "mem:///other.json": mem:///other.json is outside the schema; a schema may not refer to other documents`},
		{"file ref", `{"$ref": "file:///etc/passwd"}`, `file:///etc/passwd is outside the schema`},
		{"external ref in a definition", `{"$defs": {"q": {"$ref": "file:///tmp/x"}}}`, `file:///tmp/x is outside the schema`},
		{"external ref in an older draft's definition", `{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"q": {"$ref": "http://e.test/x"}}}`, `http://e.test/x is outside the schema`},
		{"external ref under a definition's $id", `{"$schema": "http://json-schema.org/draft-04/schema#", "definitions": {"q": {"id": "http://e.test/q", "$ref": "z.json"}}}`, `mem:///z.json is outside the schema`},
		{"external ref in a nested definition", `{"$defs": {"a b/c~%#": {"$defs": {"in": {"properties": {"x": {"$ref": "https://e.test/x"}}}}}}}`, `https://e.test/x is outside the schema`},
		{"external dynamic ref", `{"$dynamicRef": "http://e.test/x"}`, `http://e.test/x is outside the schema`},
		{"unknown draft", `{"$schema": "https://example.com/draft/99", "type": "object"}`, `https://example.com/draft/99 is outside the schema`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.Compile([]byte(tt.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "jsonschema")
		})
	}
}

const itemsSchema = `{"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "minItems": 1, "items": {"type": "string"}}}}`

const argsSchema = `{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["n"], "additionalProperties": false}`

func TestValidate(t *testing.T) {
	tests := []struct {
		name, schema string
		value        any
		want         string
	}{
		{"items ok", itemsSchema, map[string]any{"items": []any{"x"}}, ""},
		{"items empty", itemsSchema, map[string]any{"items": []any{}}, "at /items: minItems: got 0, want 1"},
		{"item not a string", itemsSchema, map[string]any{"items": []any{1}}, "at /items/0: got number, want string"},
		{"plain text", itemsSchema, "plain text", "at /: got string, want object"},
		{"args ok", argsSchema, `{"n": 2, "tags": ["a"]}`, ""},
		{"below minimum", argsSchema, `{"n": 0}`, "at /n: minimum: got 0, want 1"},
		{"tag not a string", argsSchema, `{"n": 1, "tags": [1]}`, "at /tags/0: got number, want string"},
		{"additional property", argsSchema, `{"n": 1, "x": 2}`, "at /: additional properties 'x' not allowed"},
		{"missing property", argsSchema, `{}`, "at /: missing property 'n'"},
		{"several problems", argsSchema, `{"n": 0, "tags": [1]}`, "at /n: minimum: got 0, want 1; at /tags/0: got number, want string"},
		{"Go numbers", argsSchema, map[string]any{"n": 3, "tags": []any{}}, ""},
		{"float64 integer", argsSchema, map[string]any{"n": 3.0}, ""},
		{"int64 below minimum", argsSchema, map[string]any{"n": int64(0)}, "at /n: minimum: got 0, want 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := schema.Compile([]byte(tt.schema))
			require.NoError(t, err)
			v := tt.value
			if src, ok := v.(string); ok && len(src) > 0 && src[0] == '{' {
				v, err = jsonv.DecodeBytes([]byte(src))
				require.NoError(t, err)
			}
			err = s.Validate(v)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			var verr *jsonschema.ValidationError
			assert.ErrorAs(t, err, &verr, "the library's error is kept")
		})
	}
}

// A compiled schema is used by many goroutines at once.
// Definitions that refer to each other, reached or not, compile.
func TestCompileDefinitions(t *testing.T) {
	s, err := schema.Compile([]byte(`{"$defs": {"name": {"type": "string"}, "names": {"type": "array", "items": {"$ref": "#/$defs/name"}},
		"unused": {"$ref": "#/$defs/names"}, "a/b": {"$defs": {"c": {"$ref": "#/$defs/name"}}}}, "$ref": "#/$defs/names"}`))
	require.NoError(t, err)
	assert.NoError(t, s.Validate([]any{"x"}))
	assert.EqualError(t, s.Validate([]any{1}), "at /0: got number, want string")
}

func TestValidateConcurrent(t *testing.T) {
	s, err := schema.Compile(json.RawMessage(itemsSchema))
	require.NoError(t, err)
	done := make(chan error)
	for i := range 8 {
		go func() {
			if i%2 == 0 {
				done <- s.Validate(map[string]any{"items": []any{"a"}})
				return
			}
			done <- s.Validate(map[string]any{})
		}()
	}
	fails := 0
	for range 8 {
		if <-done != nil {
			fails++
		}
	}
	assert.Equal(t, 4, fails)
}

// The account of a value's problems is the same on every validation:
// the library meets an object's properties, and the keywords of one
// place, in map order, and the account is a task's diagnosis, which
// retries, replanners and replayed workflows compare.
func TestValidateAccountIsDeterministic(t *testing.T) {
	tests := []struct {
		name, schema string
		value        any
		want         string
	}{
		{
			name:   "additional properties",
			schema: `{"type":"object","properties":{"k":{}},"additionalProperties":false}`,
			value:  map[string]any{"k": 1.0, "f": 1.0, "b": 1.0, "e": 1.0, "c": 1.0, "d": 1.0},
			want:   "additional properties 'b', 'c', 'd', 'e', 'f' not allowed",
		},
		{
			name:   "keywords of one place",
			schema: `{"type":"object","patternProperties":{"^a":{"type":"string"},"b$":{"minimum":5},"^ab":{"maxLength":0,"type":"array"}}}`,
			value:  map[string]any{"ab": 1.0},
			want:   "at /ab: got number, want string; at /ab: got number, want array; at /ab: minimum: got 1, want 5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := schema.Compile([]byte(tt.schema))
			require.NoError(t, err)
			first := s.Validate(tt.value).Error()
			assert.Contains(t, first, tt.want)
			for range 50 {
				require.Equal(t, first, s.Validate(tt.value).Error())
			}
		})
	}
}
