package yamlnode

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestSyntax(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
		msg        string
	}{
		{"scanner error, counted from 1", "a: b\n\tc: d\n", 2, "found a tab character that violates indentation"},
		{"parser error, moved to count from 1", "a:\n  b: [c\n", 2, "did not find expected ',' or ']'"},
		{"parser error at the end stays on the last line", "a: [b", 1, "did not find expected ',' or ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			err := yaml.NewDecoder(bytes.NewReader([]byte(tt.text))).Decode(&n)
			require.Error(t, err)
			line, msg := Syntax(err, []byte(tt.text))
			assert.Equal(t, tt.line, line)
			assert.Equal(t, tt.msg, msg)
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := map[string]string{
		"{a: b}": "a map", "[a]": "a list", "a": "a string", `"1"`: "a string", "12": "a number (12)", "1.5": "a number (1.5)",
		"true": "a boolean (true)", "~": "null", "2024-01-02": "a timestamp (2024-01-02)", "!!binary aGk=": "a value tagged !!binary",
	}
	for text, want := range tests {
		var n yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(text), &n))
		assert.Equal(t, want, Describe(n.Content[0]), text)
	}
	assert.Equal(t, "an alias", Describe(&yaml.Node{Kind: yaml.AliasNode}))
}

func TestKeyHint(t *testing.T) {
	assert.Equal(t, `; did you mean "timeout"?`, KeyHint("timout", []string{"command", "timeout"}))
	assert.Equal(t, `; the only key here is "command"`, KeyHint("x", []string{"command"}))
	assert.Equal(t, "; the keys are command, timeout", KeyHint("x", []string{"command", "timeout"}))
}
