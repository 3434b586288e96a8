package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typoPlan has three near misses: b's dependency on a, its non-critical
// flag and its timeout are all lost as written.
const typoPlan = `{"tasks": [
  {"id": "a", "agent": "echo", "input": "first"},
  {"id": "b", "agent": "echo", "input": "second", "depend_on": ["a"], "Critical": false, "timout": "1s"}
]}`

// typoLines are what every command prints of typoPlan's keys, after the
// file's path.
var typoLines = []string{
	`:3:64: task b: key "depend_on" is not part of the plan format and was ignored; did you mean "depends_on"? [unknown_key]`,
	`:3:83: task b: key "Critical" is not part of the plan format and was ignored; did you mean "critical"? [unknown_key]`,
	`:3:100: task b: key "timout" is not part of the plan format and was ignored; did you mean "timeout"? [unknown_key]`,
}

// notePlan has an unknown key that misspells nothing.
const notePlan = `{"tasks": [{"id": "a", "agent": "echo", "input": "first", "priority": "high"}]}`

const noteLine = `:1:71: task a: key "priority" is not part of the plan format and was ignored [unknown_key]`

// withPath prefixes each line with path.
func withPath(path string, lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(path + l + "\n")
	}
	return b.String()
}

// planAndRegistry writes the plan src and shRegistry, and returns their paths.
func planAndRegistry(t *testing.T, src string) (path, reg string) {
	t.Helper()
	dir := writeFiles(t, map[string]string{"plan.json": src, "registry.yaml": shRegistry})
	return filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml")
}

func TestUnknownKeysFmt(t *testing.T) {
	t.Run("fmt to stdout reports them", func(t *testing.T) {
		path, reg := planAndRegistry(t, typoPlan)
		code, stdout, stderr := dagent(t, "", "fmt", path, "--registry", reg)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, withPath(path, typoLines...), stderr)
		assert.NotContains(t, stdout, "depend_on")
	})
	t.Run("standard input has no path", func(t *testing.T) {
		_, reg := planAndRegistry(t, notePlan)
		code, _, stderr := dagent(t, notePlan, "fmt", "-", "--registry", reg)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, withPath("", noteLine[1:]), stderr)
	})
	t.Run("fmt -w refuses to drop keys", func(t *testing.T) {
		for _, src := range []string{typoPlan, notePlan} {
			path, reg := planAndRegistry(t, src)
			code, stdout, stderr := dagent(t, "", "fmt", "-w", path, "--registry", reg)
			assert.Equal(t, exitInvalid, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "[unknown_key]\n")
			assert.Contains(t, stderr, "dagent: not written: fmt -w would drop")
			assert.Contains(t, stderr, "--drop-unknown")
			written, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, src, string(written), "the file is left as it was")
		}
	})
	t.Run("fmt -w --drop-unknown drops them", func(t *testing.T) {
		path, reg := planAndRegistry(t, typoPlan)
		code, stdout, stderr := dagent(t, "", "fmt", "-w", "--drop-unknown", path, "--registry", reg)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stdout)
		assert.Equal(t, withPath(path, typoLines...), stderr, "what is dropped is still said")
		written, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.NotContains(t, string(written), "depend_on")
	})
	t.Run("fmt -w of a plan without unknown keys says nothing", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"plan.json": `{"tasks": [{"id": "a", "input": "x"}]}`})
		code, _, stderr := dagent(t, "", "fmt", "-w", filepath.Join(dir, "plan.json"))
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stderr)
	})
}

func TestUnknownKeysGraph(t *testing.T) {
	path, reg := planAndRegistry(t, typoPlan)
	code, stdout, stderr := dagent(t, "", "graph", "-f", "mermaid", path, "--registry", reg)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, withPath(path, typoLines...), stderr)
	assert.NotContains(t, stdout, "-->", "the graph is the plan as parsed: b does not depend on a")
}

func TestUnknownKeysOfAnInvalidPlan(t *testing.T) {
	code, stdout, stderr := dagent(t, `{"tasks": [{"id": "a", "depend_on": ["a"], "type": "bogus"}]}`, "graph", "-")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 2, stderr)
	assert.Contains(t, lines[0], "[invalid_type]")
	assert.Equal(t, `1:37: task a: key "depend_on" is not part of the plan format and was ignored; did you mean "depends_on"? [unknown_key]`, lines[1], "a misspelt key may be why the plan is invalid")
}

func TestUnknownKeysRun(t *testing.T) {
	files := func(t *testing.T, src string) (path, reg, db string) {
		path, reg = planAndRegistry(t, src)
		return path, reg, filepath.Join(filepath.Dir(path), "dagent.db")
	}
	t.Run("a near miss refuses the run before it starts", func(t *testing.T) {
		path, reg, db := files(t, typoPlan)
		code, stdout, stderr := dagent(t, "", "run", path, "--registry", reg, "--db", db)
		assert.Equal(t, exitInvalid, code)
		assert.Empty(t, stdout, "no run starts")
		assert.Equal(t, withPath(path, typoLines...)+
			"dagent: not run: 3 unknown keys are near misses of known keys, so the plan would not run as written; fix the plan, or pass --allow-unknown-keys to run it without them\n", stderr)
		assert.NoFileExists(t, db, "nothing is journaled")
	})
	t.Run("--allow-unknown-keys runs it as parsed", func(t *testing.T) {
		path, reg, db := files(t, typoPlan)
		code, doc, stderr := runJSON(t, path, "--registry", reg, "--db", db, "--allow-unknown-keys")
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, "completed", doc["status"])
		assert.True(t, strings.HasPrefix(stderr, withPath(path, typoLines...)), "the keys are still reported: %s", stderr)
	})
	t.Run("a key that misspells nothing is reported and the run goes on", func(t *testing.T) {
		path, reg, db := files(t, notePlan)
		code, doc, stderr := runJSON(t, path, "--registry", reg, "--db", db)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, "completed", doc["status"])
		assert.True(t, strings.HasPrefix(stderr, withPath(path, noteLine)), stderr)
		assert.FileExists(t, db)
	})
}
