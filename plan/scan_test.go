package plan

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadTree(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want any
		end  int
	}{
		{"object", `{"a": [1, -2.5e3, "x", true, false, null], "b": {}}`, map[string]any{
			"a": []any{json.Number("1"), json.Number("-2.5e3"), "x", true, false, nil}, "b": map[string]any{}}, 51},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"`, "a\"b\\c/d\b\f\n\r\t\u00e9\U0001F600\uFFFDx", 47},
		{"trailing text is not read", `[1] [2]`, []any{json.Number("1")}, 3},
		{"trailing commas", "{\"a\": [1, 2, ], \"b\": 3,\n}", map[string]any{"a": []any{json.Number("1"), json.Number("2")}, "b": json.Number("3")}, 25},
		{"unicode", `{"clé": "日本"}`, map[string]any{"clé": "日本"}, 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, end, err := readTree([]byte(tt.src), 0)
			require.NoError(t, err)
			assert.Equal(t, tt.want, toAny(n))
			assert.Equal(t, tt.end, end)
		})
	}
}

func TestReadTreeErrors(t *testing.T) {
	tests := []struct {
		src       string
		off       int
		msg       string
		truncated bool
	}{
		{`{"a" 1}`, 5, `invalid character '1' after object member name; expected ':'`, false},
		{`{"a": 1 "b": 2}`, 8, `invalid character '"' after object member; expected ',' or '}'`, false},
		{`[1 2]`, 3, `invalid character '2' after array element; expected ',' or ']'`, false},
		{`{a: 1}`, 1, `invalid character 'a' looking for the beginning of an object member name`, false},
		{`[01]`, 2, `invalid character '1' after array element; expected ',' or ']'`, false},
		{`[1.]`, 3, `invalid character ']' in number; expected a digit`, false},
		{`[-]`, 2, `invalid character ']' in number; expected a digit`, false},
		{`[tru]`, 4, `invalid character ']' in literal true`, false},
		{`['a']`, 1, `invalid character '\'' looking for the beginning of a value`, false},
		{`["a\x"]`, 4, `invalid character 'x' in string escape`, false},
		{`["\u12G4"]`, 6, `invalid character 'G' in \u escape; expected a hexadecimal digit`, false},
		{"[\"a\tb\"]", 3, `invalid control character '\t' in string; escape it`, false},
		{"[\"\xff\"]", 2, `invalid UTF-8 in string`, false},
		{`{"a": 1, "a": 2}`, 9, `duplicate object member name "a"`, false},
		{`{"a": 1, "\u0061": 2}`, 9, `duplicate object member name "a"`, false},
		{`{"tasks": [`, 11, `unexpected end of input: the JSON is truncated`, true},
		{`{"a": "b`, 8, `unexpected end of input: the JSON is truncated`, true},
		{``, 0, `unexpected end of input: the JSON is truncated`, true},
		{strings.Repeat("[", maxDepth+1), maxDepth, `JSON nested deeper than 10000 levels`, false},
	}
	for _, tt := range tests {
		t.Run(tt.src[:min(len(tt.src), 20)], func(t *testing.T) {
			_, _, err := readTree([]byte(tt.src), 0)
			var se *syntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.msg, se.msg)
			assert.Equal(t, tt.off, se.off)
			assert.Equal(t, tt.truncated, se.truncated)
		})
	}
}

func TestDuplicateNamesInLargeObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		b.WriteString(`"k` + strings.Repeat("x", i) + `": 1, `)
	}
	b.WriteString(`"kxxx": 2}`)
	_, _, err := readTree([]byte(b.String()), 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `duplicate object member name "kxxx"`)
}

// trailingComma finds a comma before a closing bracket, which readTree
// accepts and encoding/json does not.
var trailingComma = regexp.MustCompile(`,[ \t\r\n]*[}\]]`)

// FuzzReadTree checks the scanner against encoding/json on the first JSON
// value of any input: both accept the same documents, except that the
// scanner also refuses duplicate member names and invalid UTF-8 and accepts
// trailing commas, and both decode them to the same values.
func FuzzReadTree(f *testing.F) {
	for _, s := range []string{`{"a": [1, -2.5e3, "x\u00e9", true, null]}`, `[1, 2,]`, `{"a": 1, "a": 2}`, "[\"\xff\"]", `"\ud83d\ude00"`, `{"tasks": [`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, end, err := readTree(data, 0)

		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		refErr := dec.Decode(&want)

		switch {
		case err == nil && refErr == nil:
			require.Equal(t, int(dec.InputOffset()), end)
			require.Equal(t, want, toAny(n))
		case err == nil:
			require.Regexp(t, trailingComma, string(data[:end]), "accepted what encoding/json refuses: %v", refErr)
		case refErr == nil:
			msg := err.(*syntaxError).msg
			valid := utf8.Valid(data[:dec.InputOffset()])
			require.True(t, strings.HasPrefix(msg, "duplicate object member name") || !valid,
				"refused what encoding/json accepts: %s", msg)
		}
	})
}
