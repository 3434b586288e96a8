package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunProgressGoesToStderr checks where dagent run prints what: the
// progress on standard error in both formats, the result alone on
// standard output, and with --quiet only the result.
func TestRunProgressGoesToStderr(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "sum", "agent": "text", "depends_on": ["a"]}]}`,
		"registry.yaml": shRegistry,
	})
	base := []string{"run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--no-journal"}
	tests := []struct {
		name     string
		args     []string
		progress bool
	}{
		{"text", nil, true},
		{"json", []string{"--format", "json"}, true},
		{"quiet text", []string{"--quiet"}, false},
		{"quiet json", []string{"-q", "--format", "json"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", append(base, tt.args...)...)
			require.Equal(t, exitOK, code, stderr)
			if tt.progress {
				assert.Regexp(t, `(?m)^ +\S+  a: done in \S+\n(.*\n)* +\S+  run completed\n`, stderr)
			} else {
				assert.Empty(t, stderr)
			}
			assert.NotContains(t, stdout, "a: done in")
			if tt.name == "json" || tt.name == "quiet json" {
				var doc map[string]any
				require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "standard output is the JSON document alone: %s", stdout)
				assert.Equal(t, "completed", doc["status"])
				return
			}
			assert.Regexp(t, `^run \S+\n\nTASK +STATUS`, stdout, "the run's id, then the summary")
			assert.Contains(t, stdout, "== sum ==\na plain summary of everything\n\ncompleted in ")
		})
	}
}
