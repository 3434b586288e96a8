package plan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		want  string
		whole bool
		err   string
	}{
		{name: "bare object", text: `{"a": 1}`, want: `{"a": 1}`, whole: true},
		{name: "white space and BOM around", text: "\ufeff \n {\"a\": [1, 2]}\n\n", want: `{"a": [1, 2]}`, whole: true},
		{name: "bare array", text: `[{"id": "a"}]`, want: `[{"id": "a"}]`, whole: true},
		{name: "bare string", text: `"just text"`, want: `"just text"`, whole: true},
		{name: "bare number", text: ` 42 `, want: `42`, whole: true},
		{name: "trailing commas compacted", text: "{\"a\": [1, 2,],\n \"b\": {\"c\": true,},}", want: `{"a":[1,2],"b":{"c":true}}`, whole: true},
		{name: "json fence", text: "```json\n{\"route\": \"plan\"}\n```", want: `{"route": "plan"}`, whole: true},
		{name: "fence without language", text: "```\n[1, 2]\n```\n", want: `[1, 2]`, whole: true},
		{name: "fence language in capitals", text: "```JSON\n{\"a\": 1}\n```", want: `{"a": 1}`, whole: true},
		{name: "fence with prose around", text: "Here is the plan:\n\n```json\n{\"a\": 1}\n```\n\nIt runs two tasks.", want: `{"a": 1}`},
		{name: "fence of another language skipped", text: "```python\nprint({\"x\": 1})\n```\n```json\n{\"a\": 1}\n```", want: `{"a": 1}`},
		{name: "fenced value preferred to an object in prose", text: "Use {\"x\": 1} as a model.\n```json\n{\"a\": 1}\n```", want: `{"a": 1}`},
		{name: "fence holding more than one value", text: "```json\n{\"a\": 1} {\"b\": 2}\n```", want: `{"a": 1}`},
		{name: "object in prose", text: `The answer is {"city": "Tokyo"}, as you asked.`, want: `{"city": "Tokyo"}`},
		{name: "template and set braces passed over", text: `Input {{results.a}} and {x} give {"n": 2}.`, want: `{"n": 2}`},
		{name: "two objects: the first", text: `{"n": 1} {"n": 2}`, want: `{"n": 1}`},
		{name: "broken object then a good one", text: `First {"a": 1,, } then {"b": 2}`, want: `{"b": 2}`},
		{name: "array in prose not taken", text: `The list [1, 2] is short.`, err: "no JSON value in the text"},
		{name: "prose only", text: "I cannot help with that.", err: "no JSON value in the text"},
		{name: "empty", text: "", err: "no JSON value in the text"},
		{name: "prose in brackets", text: "[Note] nothing here", err: "no JSON value in the text"},
		{name: "truncated object", text: "Sure:\n{\"tasks\": [{\"id\": \"a\"", err: "no JSON value: invalid JSON at line 2, column 22: unexpected end of input: the JSON is truncated"},
		{name: "broken object", text: `{"a": 1 "b": 2}`, err: `no JSON value: invalid JSON at line 1, column 9: invalid character '"' after object member`},
		{name: "duplicate name", text: `{"a": 1, "a": 2}`, err: `duplicate object member name "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, whole, err := plan.ExtractJSON([]byte(tt.text))
			if tt.err != "" {
				require.ErrorIs(t, err, plan.ErrNoJSON)
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.whole, whole)
		})
	}
}

func TestExtractJSONLong(t *testing.T) {
	// A long answer full of braces costs one pass.
	text := strings.Repeat(`{"a": 1,, } `, 10_000) + `{"ok": true}`
	got, _, err := plan.ExtractJSON([]byte(text))
	require.NoError(t, err)
	assert.Equal(t, `{"ok": true}`, string(got))
}

func ExampleExtractJSON() {
	answer := "Here is the plan:\n\n```json\n{\"route\": \"plan\", \"plan\": {\"tasks\": [\"a\", \"b\",]}}\n```\n"
	v, whole, err := plan.ExtractJSON([]byte(answer))
	fmt.Println(string(v), whole, err)
	// Output: {"route":"plan","plan":{"tasks":["a","b"]}} false <nil>
}

// FuzzExtractJSON: whatever a model writes, ExtractJSON returns valid JSON
// or an error matching ErrNoJSON, and takes a text that is all one JSON
// value as the whole of it — duplicate member names and invalid UTF-8
// aside, which the scanner refuses and encoding/json lets through.
func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, "```json\n{\"a\": [1, 2,]}\n```", `Here: {"n": 2}.`, `[1, 2]`, `"x"`, `{{results.a}} {"b": true}`,
		"```\n[1]\n```", `{"a": 1, "a": 2}`, `{"a": 1`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		value, whole, err := plan.ExtractJSON(text)
		if err != nil {
			require.ErrorIs(t, err, plan.ErrNoJSON)
			if json.Valid(text) && utf8.Valid(text) {
				require.Contains(t, err.Error(), "duplicate", "a text that is one JSON value is refused only for duplicate names")
			}
			return
		}
		require.True(t, json.Valid(value), "%q", value)
		if json.Valid(text) && utf8.Valid(text) {
			require.True(t, whole, "a text that is one JSON value is taken whole")
			a, err := jsonv.DecodeBytes(text)
			require.NoError(t, err)
			b, err := jsonv.DecodeBytes(value)
			require.NoError(t, err)
			require.Equal(t, a, b)
		}
	})
}
