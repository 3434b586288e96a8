package prose_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/prose"
)

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 tasks", 1: "1 task", 2: "2 tasks"} {
		assert.Equal(t, want, prose.Plural(n, "task"))
	}
}

func TestOneLine(t *testing.T) {
	tests := map[string]string{
		"plain":             "plain",
		"a\nb":              "a b",
		"a\r\nb\rc":         "a b c",
		"\n::error::forged": " ::error::forged",
	}
	for in, want := range tests {
		assert.Equal(t, want, prose.OneLine(in), "%q", in)
	}
}

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, tabs\tand\nlines", "plain text, tabs\tand\nlines"},
		{"naïve – 日本語 🙂", "naïve – 日本語 🙂"},
		{"\x1b]0;pwned\x07\x1b[2J", `\u001b]0;pwned\u0007\u001b[2J`},
		{"\x1b]52;c;ZXZpbA==\x07", `\u001b]52;c;ZXZpbA==\u0007`},
		{"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", `\u001b]8;;http://evil\u001b\link\u001b]8;;\u001b\`},
		{"del\x7f", `del\u007f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"over\rwrite", `over\u000dwrite`},
		{"crlf\r\nkept", "crlf\r\nkept"},
		{"trailing\r", `trailing\u000d`},
		{"abc\u202etxt.exe", `abc\u202etxt.exe`},
		{"zero\u200bwidth\u200d\ufeff", `zero\u200bwidth\u200d\ufeff`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"line\u2028sep", `line\u2028sep`},
		{"tag\U000e0041", `tag\udb40\udc41`},
		{"bad \xff\xc3 utf-8", `bad \xff\xc3 utf-8`},
	}
	for _, tt := range tests {
		got := prose.Visible(tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
		assert.NotContains(t, got, "\x1b")
		assert.Equal(t, got, prose.Visible(got), "visible text stays as it is")
	}
}

// TestVisibleKeepsJSON checks that JSON made visible decodes to the same
// values: the escapes are JSON's.
func TestVisibleKeepsJSON(t *testing.T) {
	v := map[string]any{"s": "a\x7f\u0085\u202e\u200b\U000e0041\\\u2028z", "n": "\x1b[2J"}
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal([]byte(prose.Visible(string(raw))), &back))
	assert.Equal(t, v, back)
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := prose.NewWriter(&b)
	// Characters split across writes are made visible whole.
	for _, part := range []string{"日", "\xe6\x9c", "\xac \xe2\x80", "\xae|\r", "\n|\r", "x\x1b", "[2J", "\xe2"} {
		n, err := w.Write([]byte(part))
		require.NoError(t, err)
		assert.Equal(t, len(part), n)
	}
	require.NoError(t, w.Flush())
	assert.Equal(t, "日本 \\u202e|\r\n|\\u000dx\\u001b[2J\\xe2", b.String())
	assert.Same(t, &b, w.Unwrap())
}

func ExampleVisible() {
	fmt.Println(prose.Visible("done \x1b]0;pwned\x07 \u202eexe.txt"))
	// Output: done \u001b]0;pwned\u0007 \u202eexe.txt
}
