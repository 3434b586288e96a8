package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree writes files, by slash-separated path, under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	return dir
}

func worker(name string) string {
	return "workers:\n  " + name + ":\n    command: [\"true\"]\n"
}

// TestRegistryOrder: each registry has one worker of the plan's four; the
// one worker lint does not report is the resolved registry's.
func TestRegistryOrder(t *testing.T) {
	const plan = `{"tasks": [
  {"id": "a", "agent": "flagw", "input": "a"},
  {"id": "b", "agent": "envw", "input": "b"},
  {"id": "c", "agent": "confw", "input": "c"},
  {"id": "d", "agent": "besidew", "input": "d"}
]}`
	tests := []struct {
		name   string
		flag   bool
		env    bool
		config bool
		beside bool
		want   string // the agent of the resolved registry; "" none
	}{
		{"flag over everything", true, true, true, true, "flagw"},
		{"env over the configuration file", false, true, true, true, "envw"},
		{"configuration file over registry.yaml beside the plan", false, false, true, true, "confw"},
		{"registry.yaml beside the plan", false, false, false, true, "besidew"},
		{"nothing", false, false, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"plans/plan.json": plan,
				"flag.yaml":       worker("flagw"),
				"env.yaml":        worker("envw"),
				"conf/reg.yaml":   worker("confw"),
			}
			if tt.config {
				files[".dagent.yaml"] = "registry: conf/reg.yaml\n"
			}
			if tt.beside {
				files["plans/registry.yaml"] = worker("besidew")
			}
			dir := tree(t, files)
			args := []string{filepath.Join(dir, "plans", "plan.json")}
			if tt.flag {
				args = append([]string{"--registry", filepath.Join(dir, "flag.yaml")}, args...)
			}
			t.Setenv(registryEnv, "")
			if tt.env {
				t.Setenv(registryEnv, filepath.Join(dir, "env.yaml"))
			}
			code, doc, stderr := lintJSONOut(t, "", args...)
			var unknown []string
			for _, is := range doc.Files[0].Issues {
				if is.Check == "unknown_worker" {
					unknown = append(unknown, is.TaskID)
				}
			}
			if tt.want == "" {
				assert.Equal(t, exitOK, code, stderr)
				assert.Empty(t, unknown)
				assert.Contains(t, stderr, "note: no --registry given")
				return
			}
			assert.Equal(t, exitInvalid, code, stderr)
			assert.Empty(t, stderr)
			all := map[string]string{"flagw": "a", "envw": "b", "confw": "c", "besidew": "d"}
			var want []string
			for _, agent := range []string{"flagw", "envw", "confw", "besidew"} {
				if agent != tt.want {
					want = append(want, all[agent])
				}
			}
			assert.Equal(t, want, unknown)
		})
	}
}

// TestNoRegistry: fmt and graph draw a plan of host workers without a
// registry, saying so; run, which must start them, refuses it and says
// why.
func TestNoRegistry(t *testing.T) {
	t.Setenv(registryEnv, "")
	dir := tree(t, map[string]string{"plan.json": `{"tasks": [{"id": "vet", "agent": "go-vet", "input": "vet"}]}`})
	path := filepath.Join(dir, "plan.json")
	note := "note: " + noRegistry + `: agent "go-vet" is taken as a host worker, unchecked` + "\n"
	for _, cmd := range []string{"fmt", "graph"} {
		code, stdout, stderr := dagent(t, "", cmd, path)
		assert.Equal(t, exitOK, code, cmd)
		assert.NotEmpty(t, stdout, cmd)
		assert.Equal(t, note, stderr, cmd)
	}
	code, _, stderr := dagent(t, "", "run", "--no-journal", path)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, `agent "go-vet" is not defined in the plan's agents and is not a registry worker [unknown_agent]`)
	assert.Contains(t, stderr, "dagent: no --registry given (nor DAGENT_REGISTRY")

	// The bundled examples have their registry beside them.
	code, stdout, stderr := dagent(t, "", "lint", "../../examples/health/plan.json", "../../examples/pipeline/plan.json")
	assert.Equal(t, exitOK, code, stdout)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "2 files, 0 critical")
	code, _, stderr = dagent(t, "", "graph", "../../examples/health/plan.json")
	assert.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
}

// loosePlan has two disconnected_flow issues, on b and c: each depends
// on a without using its result.
const loosePlan = `{"tasks": [
  {"id": "a", "input": "List the files of the repository"},
  {"id": "b", "input": "Count the lines", "depends_on": ["a"]},
  {"id": "c", "input": "Count the words", "depends_on": ["a"]}
]}`

func TestLintConfig(t *testing.T) {
	t.Setenv(registryEnv, "")
	checks := func(args ...string) (int, []string, string) {
		t.Helper()
		code, doc, stderr := lintJSONOut(t, "", args...)
		var got []string
		for _, f := range doc.Files {
			for _, is := range f.Issues {
				got = append(got, is.TaskID+":"+is.Check)
			}
		}
		return code, got, stderr
	}
	// The plan as it is, without any configuration.
	bare := tree(t, map[string]string{"plan.json": loosePlan})
	_, all, _ := checks(filepath.Join(bare, "plan.json"))
	require.Contains(t, all, "b:disconnected_flow")
	require.Contains(t, all, "c:disconnected_flow")

	tests := []struct {
		name   string
		config string
		args   []string
		code   int
		want   []string // the issues left, of those of the bare plan
		stderr string
	}{
		{"disable in the file", "lint:\n  disable: [disconnected_flow]\n", nil, exitOK, nil, ""},
		{"--enable overrides the file", "lint:\n  disable: [disconnected_flow]\n", []string{"--enable", "disconnected_flow"}, exitOK, []string{"b:disconnected_flow", "c:disconnected_flow"}, ""},
		{"--disable", "", []string{"--disable", "disconnected_flow"}, exitOK, nil, ""},
		{"disable all, enable one", "", []string{"--disable", "all", "--enable", "disconnected_flow"}, exitOK, []string{"b:disconnected_flow", "c:disconnected_flow"}, ""},
		{"exclude a task", "lint:\n  exclude:\n    - task: b\n      checks: [disconnected_flow]\n", nil, exitOK, []string{"c:disconnected_flow"}, ""},
		{"exclude by path", "lint:\n  exclude:\n    - path: \"plans/*.json\"\n      checks: [all]\n", nil, exitOK, nil, ""},
		{"exclude another path", "lint:\n  exclude:\n    - path: other/*.json\n      checks: [all]\n", nil, exitOK, []string{"b:disconnected_flow", "c:disconnected_flow"}, ""},
		{"fail-on in the file", "lint:\n  fail-on: info\n", nil, exitInvalid, []string{"b:disconnected_flow", "c:disconnected_flow"}, ""},
		{"--fail-on over the file", "lint:\n  fail-on: info\n", []string{"--fail-on", "never"}, exitOK, []string{"b:disconnected_flow", "c:disconnected_flow"}, ""},
		{"max-issues keeps the exit status", "lint:\n  max-issues: 1\n", []string{"--fail-on", "info"}, exitInvalid, []string{"b:disconnected_flow"}, "plan.json: 1 more issues not shown (--max-issues 1)\n"},
		{"--max-issues over the file", "lint:\n  max-issues: 1\n", []string{"--max-issues", "0"}, exitOK, []string{"b:disconnected_flow", "c:disconnected_flow"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"plans/plan.json": loosePlan}
			if tt.config != "" {
				files[".dagent.yaml"] = tt.config
			}
			dir := tree(t, files)
			path := filepath.Join(dir, "plans", "plan.json")
			code, got, stderr := checks(append(tt.args, path)...)
			assert.Equal(t, tt.code, code, stderr)
			var want []string
			for _, is := range all {
				if slices.Contains(tt.want, is) || !strings.HasSuffix(is, ":disconnected_flow") {
					want = append(want, is)
				}
			}
			assert.Equal(t, want, got)
			if tt.stderr != "" {
				assert.Equal(t, path[:len(path)-len("plan.json")]+tt.stderr, stderr)
			} else {
				assert.Empty(t, stderr)
			}
		})
	}
}

func TestLintConfigErrors(t *testing.T) {
	t.Setenv(registryEnv, "")
	tests := []struct {
		name   string
		config string
		args   []string
		stderr string
	}{
		{"unknown check", "", []string{"--disable", "disconnected_flwo"}, `dagent: --disable: unknown check "disconnected_flwo"; the checks are listed in docs/lint.md`},
		{"a check that cannot be disabled in the file", "lint:\n  disable: [missing_dependency]\n", nil, `/.dagent.yaml:2:13: lint.disable: check "missing_dependency" cannot be disabled: a plan with it does not run` + "\n"},
		{"a check that cannot be disabled", "", []string{"--disable", "cycle"}, `dagent: --disable: check "cycle" cannot be disabled: a plan with it does not run`},
		{"a key the file does not know", "lint:\n  disabled: [disconnected_flow]\n", nil, `/.dagent.yaml:2:3: lint.disabled: unknown key; did you mean "disable"?` + "\n"},
		{"an exclude rule without checks", "lint:\n  exclude:\n    - task: a\n", nil, "/.dagent.yaml:3:7: lint.exclude: a rule needs checks: the checks it silences, or [all]\n"},
		{"negative max-issues", "", []string{"--max-issues", "-1"}, "dagent: --max-issues must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"plan.json": loosePlan}
			if tt.config != "" {
				files[".dagent.yaml"] = tt.config
			}
			dir := tree(t, files)
			code, stdout, stderr := dagent(t, "", append(append([]string{"lint"}, tt.args...), filepath.Join(dir, "plan.json"))...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			if tt.config != "" {
				assert.Equal(t, "dagent: "+dir+tt.stderr, stderr, "the file, the line and column, the field")
				return
			}
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

func TestLintDirectories(t *testing.T) {
	t.Setenv(registryEnv, "")
	dir := tree(t, map[string]string{
		"a.json":                 `{"tasks": [{"id": "a", "input": "x"}]}`,
		"package.json":           `{"name": "web", "version": "1.0.0"}`,
		"broken.json":            `{"tasks": [`,
		"notes.md":               "# not JSON",
		"sub/b.json":             `{"steps": ["b"]}`,
		"sub/deeper/c.json":      `{"plan": {"tasks": [{"id": "c", "input": "x"}]}}`,
		"testdata/t.json":        `{"tasks": [{"id": "t", "input": "x"}]}`,
		".hidden/h.json":         `{"tasks": [{"id": "h", "input": "x"}]}`,
		"node_modules/m/p.json":  `{"tasks": [{"id": "m", "input": "x"}]}`,
		"sub/tsconfig.json":      `{"compilerOptions": {}}`,
		"sub/deeper/schema.json": `[1, 2]`,
	})
	paths := func(args ...string) []string {
		t.Helper()
		_, doc, stderr := lintJSONOut(t, "", args...)
		var got []string
		for _, f := range doc.Files {
			rel, err := filepath.Rel(dir, f.Path)
			require.NoError(t, err, stderr)
			got = append(got, filepath.ToSlash(rel))
		}
		return got
	}
	assert.Equal(t, []string{"a.json", "broken.json"}, paths(dir), "a directory: its own plans, and what is not JSON")
	assert.Equal(t, []string{"a.json", "broken.json", "sub/b.json", "sub/deeper/c.json"}, paths(dir+"/..."))

	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(filepath.Join(dir, "sub"))
	code, doc, stderr := lintJSONOut(t, "", "./...")
	t.Chdir(wd)
	assert.Equal(t, exitOK, code, stderr)
	var got []string
	for _, f := range doc.Files {
		got = append(got, filepath.ToSlash(f.Path))
	}
	assert.Equal(t, []string{"b.json", "deeper/c.json"}, got)

	// Named files are reviewed, unless --only-plans skips what is not a
	// plan, as a hook handed every changed JSON file needs.
	assert.Equal(t, []string{"package.json", "a.json"}, paths(filepath.Join(dir, "package.json"), filepath.Join(dir, "a.json")))
	assert.Equal(t, []string{"a.json"}, paths("--only-plans", filepath.Join(dir, "package.json"), filepath.Join(dir, "a.json")))

	code, _, stderr = dagent(t, "", "lint", filepath.Join(dir, "testdata", "..", "node_modules"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no plan under")
}
