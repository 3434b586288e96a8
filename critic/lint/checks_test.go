package lint

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
)

// checkPlan has issues of several checks, and one that may not be
// disabled (e:invalid_timeout).
const checkPlan = `{"tasks": [
  {"id": "a", "input": "List the files of the repository", "colour": 1},
  {"id": "b", "input": "Count the lines", "depends_on": ["a"], "on_failure": "retry", "max_retries": 0},
  {"id": "c", "input": "Count the words", "depends_on": ["a"]},
  {"id": "d", "input": "Pick a title"},
  {"id": "e", "input": "Publish {{results.a}}", "depends_on": ["a"], "timeout": "soon"}
]}`

// issues lists the issues of r as "task:check".
func issues(r Result) []string {
	var out []string
	for _, is := range r.Report.Issues {
		out = append(out, is.TaskID+":"+is.Check)
	}
	return out
}

func without(all []string, drop ...string) []string {
	var out []string
	for _, is := range all {
		keep := true
		for _, d := range drop {
			if is == d {
				keep = false
			}
		}
		if keep {
			out = append(out, is)
		}
	}
	return out
}

func TestCheckSet(t *testing.T) {
	dir := t.TempDir()
	plans := filepath.Join(dir, "plans")
	require.NoError(t, os.Mkdir(plans, 0o755))
	path := filepath.Join(plans, "p.json")
	require.NoError(t, os.WriteFile(path, []byte(checkPlan), 0o600))

	lintWith := func(t *testing.T, file Settings, opts Settings) Result {
		t.Helper()
		l, err := New(Options{Settings: opts, Config: &Config{Path: filepath.Join(dir, ConfigName), Lint: file}})
		require.NoError(t, err)
		r, err := l.File(context.Background(), path)
		require.NoError(t, err)
		return r
	}
	all := issues(lintWith(t, Settings{}, Settings{}))
	require.Equal(t, []string{"a:unknown_key", "b:disconnected_flow", "b:missing_gate", "b:retry_without_budget", "c:disconnected_flow", "d:orphan_task", "e:invalid_timeout"}, all)
	fixedOnly := []string{"e:invalid_timeout"}

	tests := []struct {
		name       string
		file, opts Settings
		want       []string
	}{
		{"disable in the file", Settings{Disable: []string{"disconnected_flow"}}, Settings{},
			without(all, "b:disconnected_flow", "c:disconnected_flow")},
		{"enable in code over disable in the file", Settings{Disable: []string{"disconnected_flow"}}, Settings{Enable: []string{"disconnected_flow"}},
			all},
		{"disable in code over enable in the file", Settings{Enable: []string{"disconnected_flow"}}, Settings{Disable: []string{"disconnected_flow"}},
			without(all, "b:disconnected_flow", "c:disconnected_flow")},
		{"within one level, disable first", Settings{Disable: []string{"orphan_task"}, Enable: []string{"orphan_task"}}, Settings{},
			all},
		{"all leaves the fixed checks", Settings{}, Settings{Disable: []string{"all"}},
			fixedOnly},
		{"all, then one", Settings{Disable: []string{"all"}}, Settings{Enable: []string{"orphan_task"}},
			[]string{"d:orphan_task", "e:invalid_timeout"}},
		{"unknown_key may be disabled", Settings{Disable: []string{"unknown_key"}}, Settings{},
			without(all, "a:unknown_key")},
		{"exclude a task's check", Settings{Exclude: []Exclude{{Task: "b", Checks: []string{"disconnected_flow"}}}}, Settings{},
			without(all, "b:disconnected_flow")},
		{"exclude a task's every check", Settings{Exclude: []Exclude{{Task: "b", Checks: []string{"all"}}}}, Settings{},
			without(all, "b:disconnected_flow", "b:missing_gate", "b:retry_without_budget")},
		{"exclude everything but the fixed checks", Settings{Exclude: []Exclude{{Checks: []string{"all"}}}}, Settings{},
			fixedOnly},
		{"exclude by path, relative to the file", Settings{Exclude: []Exclude{{Path: "plans/*.json", Checks: []string{"orphan_task"}}}}, Settings{},
			without(all, "d:orphan_task")},
		{"exclude another path", Settings{Exclude: []Exclude{{Path: "other/*.json", Checks: []string{"all"}}}}, Settings{},
			all},
		{"exclude another task", Settings{Exclude: []Exclude{{Task: "x", Checks: []string{"all"}}}}, Settings{},
			all},
		{"exclude wins over enable", Settings{Exclude: []Exclude{{Checks: []string{"orphan_task"}}}}, Settings{Enable: []string{"orphan_task"}},
			without(all, "d:orphan_task")},
		{"excludes in code add to the file's", Settings{Exclude: []Exclude{{Checks: []string{"orphan_task"}}}}, Settings{Exclude: []Exclude{{Task: "a", Checks: []string{"unknown_key"}}}},
			without(all, "d:orphan_task", "a:unknown_key")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, issues(lintWith(t, tt.file, tt.opts)))
		})
	}
}

// Exclude paths in code are relative to the working directory.
func TestExcludeInCode(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "plans"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plans", "p.json"), []byte(checkPlan), 0o600))
	t.Chdir(dir)
	for _, pattern := range []string{"plans/p.json", "plans/*"} {
		l, err := New(Options{Config: &Config{}, Settings: Settings{Exclude: []Exclude{{Path: pattern, Checks: []string{"all"}}}}})
		require.NoError(t, err)
		r, err := l.File(context.Background(), filepath.Join(dir, "plans", "p.json"))
		require.NoError(t, err)
		assert.Equal(t, []string{"e:invalid_timeout"}, issues(r), pattern)
	}
}

func TestMatches(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"plans/*.json", filepath.Join(dir, "plans", "a.json"), true},
		{"plans/*.json", filepath.Join(dir, "plans", "sub", "a.json"), false},
		{"*.json", filepath.Join(dir, "a.json"), true},
		{"a.json", filepath.Join(dir, "..", "a.json"), false},
		{"plans/a.json", filepath.Join(dir, "plans", ".", "a.json"), true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, matches(dir, tt.pattern, tt.path), "%s ~ %s", tt.pattern, tt.path)
	}
}

func TestCapIssues(t *testing.T) {
	is := func(sev critic.Severity, check string) critic.Issue { return critic.Issue{Severity: sev, Check: check} }
	w1, i1, c1, w2, i2 := is(critic.Warning, "w1"), is(critic.Info, "i1"), is(critic.Critical, "c1"), is(critic.Warning, "w2"), is(critic.Info, "i2")
	tests := []struct {
		name    string
		issues  []critic.Issue
		max     int
		want    []critic.Issue
		omitted int
	}{
		{"no cap", []critic.Issue{w1, i1, c1}, 0, []critic.Issue{w1, i1, c1}, 0},
		{"under the cap", []critic.Issue{w1, i1}, 2, []critic.Issue{w1, i1}, 0},
		{"the worst, in report order", []critic.Issue{w1, i1, c1, w2, i2}, 2, []critic.Issue{w1, c1}, 3},
		{"ties keep report order", []critic.Issue{i1, w1, i2, w2}, 3, []critic.Issue{i1, w1, w2}, 1},
		{"one", []critic.Issue{i1, w1, c1}, 1, []critic.Issue{c1}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := critic.Report{Score: 4, Issues: tt.issues}
			assert.Equal(t, tt.omitted, capIssues(&rep, tt.max))
			assert.Equal(t, tt.want, rep.Issues)
			assert.Equal(t, 4, rep.Score, "the score stays that of every issue")
		})
	}
}

func TestFailOnAndMaxIssues(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	// Warnings and an info, nothing critical.
	require.NoError(t, os.WriteFile(path, []byte(`{"tasks": [
  {"id": "a", "input": "List the files"},
  {"id": "b", "input": "Count the lines", "depends_on": ["a"]},
  {"id": "c", "input": "Pick a title"}
]}`), 0o600))
	tests := []struct {
		name      string
		file      Settings
		opts      Settings
		fails     bool
		shown     int
		omitted   int
		maxIssues int
	}{
		{"default gate is critical", Settings{}, Settings{}, false, 2, 0, 0},
		{"the file's gate", Settings{FailOn: critic.GateWarning}, Settings{}, true, 2, 0, 0},
		{"the caller's gate over the file's", Settings{FailOn: critic.GateWarning}, Settings{FailOn: critic.GateNever}, false, 2, 0, 0},
		{"info", Settings{}, Settings{FailOn: critic.GateInfo}, true, 2, 0, 0},
		{"the file's cap", Settings{MaxIssues: intp(1)}, Settings{FailOn: critic.GateInfo}, true, 1, 1, 1},
		{"the caller's 0 lifts the file's cap", Settings{MaxIssues: intp(1)}, Settings{MaxIssues: intp(0)}, false, 2, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(Options{Settings: tt.opts, Config: &Config{Lint: tt.file}})
			require.NoError(t, err)
			r, err := l.File(context.Background(), path)
			require.NoError(t, err)
			assert.Equal(t, tt.fails, r.Fails)
			assert.Len(t, r.Report.Issues, tt.shown)
			assert.Equal(t, tt.omitted, r.Omitted)
			assert.Equal(t, tt.maxIssues, r.MaxIssues)
		})
	}
}
