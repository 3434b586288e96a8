package regfile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMaxConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data   string
		worker, tool int
	}{
		{"unset", "workers:\n  w: {command: [a]}\ntools:\n  t: {command: [b]}\n", 0, 0},
		{"yaml", "workers:\n  w:\n    command: [a]\n    max_concurrency: 1\ntools:\n  t:\n    command: [b]\n    max_concurrency: 4\n", 1, 4},
		{"json", `{"workers": {"w": {"command": ["a"], "max_concurrency": 3}}, "tools": {"t": {"command": ["b"], "max_concurrency": 2}}}`, 3, 2},
		{"null is unset", "workers:\n  w:\n    command: [a]\n    max_concurrency:\ntools:\n  t: {command: [b], max_concurrency: ~}\n", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse([]byte(tt.data), "/base")
			require.NoError(t, err)
			w, ok := r.Lookup("w")
			require.True(t, ok)
			assert.Equal(t, tt.worker, w.MaxConcurrency)
			tool, ok := r.LookupTool("t")
			require.True(t, ok)
			assert.Equal(t, tt.tool, tool.MaxConcurrency)
		})
	}
}

func TestParseMaxConcurrencyErrors(t *testing.T) {
	t.Parallel()
	w := "workers:\n  w:\n    command: [a]\n" // settings start on line 3
	tl := "tools:\n  t:\n    command: [a]\n"
	tests := []struct {
		name, data, want string
	}{
		{"zero", w + "    max_concurrency: 0\n", `line 4: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not 0; leave it out for no bound`},
		{"negative", w + "    max_concurrency: -2\n", `line 4: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not -2; leave it out for no bound`},
		{"fraction", w + "    max_concurrency: 1.5\n", `line 4: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not a number (1.5)`},
		{"string", w + "    max_concurrency: one\n", `line 4: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not a string`},
		{"quoted number", w + "    max_concurrency: \"2\"\n", `line 4: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not a string`},
		{"list", w + "    max_concurrency: [1]\n", `line 4: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not a list`},
		{"too large", w + "    max_concurrency: 2000000\n", `line 4: worker "w": max_concurrency 2000000 is more than 1048576`},
		{"json", `{"workers": {"w": {"command": ["a"],` + "\n" + `"max_concurrency": 0}}}`, `line 2: worker "w": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not 0; leave it out for no bound`},
		{"tool zero", tl + "    max_concurrency: 0\n", `line 4: tool "t": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not 0; leave it out for no bound`},
		{"tool bool", tl + "    max_concurrency: true\n", `line 4: tool "t": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not a boolean (true)`},
		{"misspelt", w + "    max_concurency: 1\n", `line 4: worker "w": unknown key "max_concurency"; did you mean "max_concurrency"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse([]byte(tt.data), "/base")
			assert.Nil(t, r)
			assert.ErrorIs(t, err, ErrInvalidRegistry)
			assert.EqualError(t, err, tt.want)
		})
	}
}
