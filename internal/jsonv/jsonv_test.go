package jsonv_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    any
		wantErr string
	}{
		{"object", `{"a": [1, 2.5, "x", true, null]}`, map[string]any{"a": []any{json.Number("1"), json.Number("2.5"), "x", true, nil}}, ""},
		{"big integer stays exact", `12345678901234567890`, json.Number("12345678901234567890"), ""},
		{"white space around", " \n\t\"s\"\r\n ", "s", ""},
		{"null", `null`, nil, ""},
		{"two values", `{"n": 1} {"n": 2}`, nil, "trailing data after the JSON value"},
		{"garbage after", `[1] x`, nil, "trailing data after the JSON value"},
		{"closing bracket after", `{} ]`, nil, "trailing data after the JSON value"},
		{"empty", ``, nil, "EOF"},
		{"truncated", `{"a": `, nil, "unexpected EOF"},
		{"invalid", `{a: 1}`, nil, "invalid character 'a'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, got := range []func() (any, error){
				func() (any, error) { return jsonv.Decode(strings.NewReader(tt.in)) },
				func() (any, error) { return jsonv.DecodeBytes([]byte(tt.in)) },
			} {
				v, err := got()
				if tt.wantErr != "" {
					assert.ErrorContains(t, err, tt.wantErr)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, tt.want, v)
			}
		})
	}
	_, err := jsonv.DecodeBytes([]byte(`1 2`))
	assert.ErrorIs(t, err, jsonv.ErrTrailing)
}

func TestMarshalAndEncode(t *testing.T) {
	tests := []struct {
		name              string
		v                 any
		compact, indented string
	}{
		{"no HTML escaping", map[string]any{"p": "(< a b) & <c>"}, `{"p":"(< a b) & <c>"}`, "{\n  \"p\": \"(< a b) & <c>\"\n}"},
		{"sorted keys", map[string]any{"b": 1, "a": json.Number("2")}, `{"a":2,"b":1}`, "{\n  \"a\": 2,\n  \"b\": 1\n}"},
		{"string", "x", `"x"`, `"x"`},
		{"nil", nil, `null`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := jsonv.Marshal(tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.compact, string(b))

			var line bytes.Buffer
			require.NoError(t, jsonv.Encode(&line, tt.v))
			assert.Equal(t, tt.compact+"\n", line.String())

			var ind bytes.Buffer
			require.NoError(t, jsonv.EncodeIndent(&ind, tt.v, "  "))
			assert.Equal(t, tt.indented+"\n", ind.String())
		})
	}
	_, err := jsonv.Marshal(math.Inf(1))
	assert.Error(t, err)
}

// TestMarshalString checks that strings, which Marshal writes itself when
// they need no escape, come out as encoding/json writes them.
func TestMarshalString(t *testing.T) {
	for _, s := range stringCases {
		assertMarshalsString(t, s)
	}
}

var stringCases = []string{
	"", "plain", "café ünïcode 日本", "a\"b", `back\slash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
	"\b\f", "<html> & </html>", "\u2028\u2029", "bad \xff utf-8", "\xed\xa0\x80", "\U0001F600", strings.Repeat("x", 1<<16),
}

func FuzzMarshalString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(assertMarshalsString)
}

func assertMarshalsString(t *testing.T, s string) {
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	got, err := jsonv.Marshal(s)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(want.String(), "\n"), string(got), "%q", s)
	assert.Equal(t, "x:"+string(got), string(jsonv.AppendString([]byte("x:"), s)), "%q", s)
}

type point struct {
	X int    `json:"x"`
	Y string `json:"y"`
}

func TestNormalize(t *testing.T) {
	shaped := map[string]any{"a": []any{1, int64(2), 2.5, json.Number("3"), "s", true, nil}}
	tests := []struct {
		name    string
		in      any
		want    any
		wantErr string
	}{
		{"JSON-shaped kept", shaped, shaped, ""},
		{"struct", point{X: 1, Y: "<b>"}, map[string]any{"x": json.Number("1"), "y": "<b>"}, ""},
		{"typed map", map[string]int{"n": 7}, map[string]any{"n": json.Number("7")}, ""},
		{"typed slice", []string{"a", "b"}, []any{"a", "b"}, ""},
		{"nested foreign value", map[string]any{"p": point{X: 2}}, map[string]any{"p": map[string]any{"x": json.Number("2"), "y": ""}}, ""},
		{"float32", float32(1.5), json.Number("1.5"), ""},
		{"raw message", json.RawMessage(`{"k": [1]}`), map[string]any{"k": []any{json.Number("1")}}, ""},
		{"channel", make(chan int), nil, "a value of type chan int is not JSON-shaped"},
		{"NaN", map[string]any{"x": []any{point{}, math.NaN()}}, nil, "is not JSON-shaped"},
		{"as deep as allowed", nest(jsonv.MaxDepth, nil), nest(jsonv.MaxDepth, nil), ""},
		{"too deep", nest(jsonv.MaxDepth+1, nil), nil, "nested too deep: more than 1000 levels of arrays and objects"},
		{"too deep in objects", nestObjects(jsonv.MaxDepth + 1), nil, "nested too deep"},
		{"too deep once converted", nest(jsonv.MaxDepth, []int{1}), nil, "nested too deep"},
		{"deep beside a foreign value", []any{point{}, nest(jsonv.MaxDepth, nil)}, nil, "nested too deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonv.Normalize(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				if strings.Contains(tt.wantErr, "too deep") {
					assert.ErrorIs(t, err, jsonv.ErrTooDeep)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// nest wraps inner in depth arrays.
func nest(depth int, inner any) any {
	v := inner
	if v == nil {
		v = []any{}
		depth--
	}
	for range depth {
		v = []any{v}
	}
	return v
}

// nestObjects is depth objects, one in another.
func nestObjects(depth int) any {
	v := map[string]any{}
	for range depth - 1 {
		v = map[string]any{"k": v}
	}
	return v
}

// A JSON-shaped value is returned as it is: no copy.
func TestNormalizeKeepsShapedValue(t *testing.T) {
	m := map[string]any{"a": []any{"x"}}
	got, err := jsonv.Normalize(m)
	require.NoError(t, err)
	got.(map[string]any)["b"] = 1
	assert.Contains(t, m, "b")
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"string as it is", "a <b> & \"c\"", "a <b> & \"c\""},
		{"number", json.Number("12345678901234567890"), "12345678901234567890"},
		{"object as compact JSON", map[string]any{"q": "<x>", "n": 1}, `{"n":1,"q":"<x>"}`},
		{"list", []any{"a", 1.5}, `["a",1.5]`},
		{"nil", nil, "null"},
		{"bool", true, "true"},
		{"raw message as written", json.RawMessage(`{"a": 1}`), `{"a": 1}`},
		{"struct", point{X: 1, Y: "y"}, `{"x":1,"y":"y"}`},
		{"not encodable", math.Inf(-1), "-Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, jsonv.Text(tt.in))
		})
	}
}
