package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker that declares outputs and prints text fails its task, with a
// diagnosis that names the worker, its slots and what it printed, escaped.
func TestRunWorkerWithOutputsPrintsText(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"tasks": [{"id": "a", "agent": "summary", "input": "x"}]}`,
		"registry.yaml": `workers:
  summary:
    description: Declares outputs, prints text
    command: ["sh", "-c", "cat >/dev/null; printf 'a plain summary\n\x1b[31mred\n'"]
    outputs: [files, count]
`,
	})
	code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--no-journal")
	require.Equal(t, 1, code, stderr)
	assert.Equal(t, "failed", taskField(t, doc, "a", "status"))
	assert.Equal(t, "invalid_output", taskField(t, doc, "a", "class"))
	assert.Equal(t, `invalid output: worker "summary" declares outputs files, count and must print one JSON object on standard output; it printed text: "a plain summary\n\x1b[31mred"`,
		taskField(t, doc, "a", "diagnosis"))
}
