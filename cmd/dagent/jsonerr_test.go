package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONErrors: every command asked for --format json that fails before
// it prints its document prints a JSON error document on stdout instead,
// and the error on stderr as before; in text, stdout stays empty.
func TestJSONErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"invalid.json":  `{"tasks": [{"id": "a", "agent": "nobody"}, {"id": "b", "depends_on": ["zz"]}]}`,
		"ok.json":       `{"tasks": [{"id": "a", "agent": "echo"}]}`,
		"registry.yaml": shRegistry,
		"bad.yaml":      "workers:\n  echo:\n    comand: [sh]\n",
	})
	in := func(name string) string { return filepath.Join(dir, name) }
	noDB := filepath.Join(dir, "none", "x.db")
	tests := []struct {
		name     string
		args     []string
		code     int
		error    string
		problems int
	}{
		{"run: invalid plan", []string{"run", in("invalid.json"), "--registry", in("registry.yaml")}, exitInvalid, "the plan is invalid: 2 problems", 2},
		{"run: invalid registry", []string{"run", in("ok.json"), "--registry", in("bad.yaml")}, exitInvalid, in("bad.yaml") + `:3: worker "echo": unknown key "comand"; did you mean "command"?`, 0},
		{"run: no plan", []string{"run", in("missing.json")}, exitUsage, "read plan: " + in("missing.json") + " does not exist", 0},
		{"run: bad flag value", []string{"run", in("ok.json"), "--schedule", "sideways"}, exitUsage, "", 0},
		{"resume", []string{"resume", "x", "--db", noDB}, exitUsage, "", 0},
		{"runs", []string{"runs", "--db", noDB, "--limit", "-1"}, exitUsage, "", 0},
		{"show", []string{"show", "x", "--db", noDB}, exitUsage, "", 0},
		{"replay", []string{"replay", "x", "--db", noDB}, exitUsage, "", 0},
		{"lint", []string{"lint", in("missing.json")}, exitUsage, "read plan: " + in("missing.json") + " does not exist", 0},
		{"graph", []string{"graph", in("invalid.json")}, exitInvalid, "the plan is invalid: 2 problems", 2},
		{"verify: bad argument", []string{"verify", "true", "--depends", "[]"}, exitUsage, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", append(tt.args, "--format", "json")...)
			require.Equal(t, tt.code, code, stderr)
			assert.NotEmpty(t, stderr, "the error is on stderr too")
			var doc errorDoc
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
			assert.Equal(t, docVersion, doc.Version)
			assert.Equal(t, tt.code, doc.ExitCode)
			assert.NotEmpty(t, doc.Error)
			if tt.error != "" {
				assert.Equal(t, tt.error, doc.Error)
			}
			assert.Len(t, doc.Problems, tt.problems)

			code, stdout, _ = dagent(t, "", tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Empty(t, stdout, "text errors are on stderr alone")
		})
	}
}

// TestJSONDocumentsCarryTheirVersion: every JSON document dagent prints
// has a "version" key, the version of its form.
func TestJSONDocumentsCarryTheirVersion(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "echo"}]}`,
		"registry.yaml": shRegistry,
	})
	plan, reg, db := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml"), filepath.Join(dir, "runs.db")
	code, stdout, stderr := dagent(t, "", "run", plan, "--registry", reg, "--db", db, "--run-id", "r1", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	docs := map[string]string{"run": stdout}
	for name, args := range map[string][]string{
		"resume": {"resume", "r1", "--db", db},
		"runs":   {"runs", "--db", db},
		"show":   {"show", "r1", "--db", db},
		"replay": {"replay", "r1", "--db", db},
		"lint":   {"lint", plan, "--registry", reg},
		"graph":  {"graph", plan, "--registry", reg},
		"verify": {"verify", "true"},
	} {
		code, stdout, stderr := dagent(t, "", append(args, "--format", "json")...)
		require.Equal(t, exitOK, code, "%s: %s", name, stderr)
		docs[name] = stdout
	}
	for name, doc := range docs {
		var v struct{ Version *int }
		require.NoError(t, json.Unmarshal([]byte(doc), &v), "%s: %s", name, doc)
		if assert.NotNil(t, v.Version, "%s: %s", name, doc) {
			assert.Equal(t, 1, *v.Version, name)
		}
	}
}
