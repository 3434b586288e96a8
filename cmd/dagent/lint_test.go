package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixed set of files every format is checked on: a good plan, a plan
// with critical, warning and info issues, and a text that is not a plan.
var lintSet = []string{"testdata/lint/good.json", "testdata/lint/mixed.json", "testdata/lint/not-a-plan.txt"}

const (
	mixedPlan    = "testdata/lint/mixed.json"
	lintRegistry = "testdata/lint/workers.yaml"
	// warningPlan has a warning and nothing worse; infoPlan an info only.
	warningPlan = `{"tasks": [{"id": "a", "input": "Write an outline.", "on_failure": "retry", "max_retries": 0}]}`
	infoPlan    = `{"tasks": [{"id": "a", "input": "Write an outline."}, {"id": "b", "input": "Expand {{results.a}}.", "depends_on": ["a"]}, {"id": "c", "input": "Pick a title."}]}`
)

// The --format json document, as a consumer decodes it.
type (
	lintJSONDoc struct {
		Files []lintJSONFile `json:"files"`
	}
	lintJSONFile struct {
		Path            string          `json:"path"`
		Score           int             `json:"score"`
		Summary         string          `json:"summary"`
		Issues          []lintJSONIssue `json:"issues"`
		Recommendations []string        `json:"recommendations"`
	}
	lintJSONIssue struct {
		Check          string          `json:"check"`
		Severity       critic.Severity `json:"severity"`
		TaskID         string          `json:"task_id"`
		Field          string          `json:"field"`
		Message        string          `json:"message"`
		Recommendation string          `json:"recommendation"`
		Line           int             `json:"line"`
		Column         int             `json:"column"`
	}
)

// lintJSONOut runs dagent lint --format json and decodes its output.
func lintJSONOut(t *testing.T, stdin string, args ...string) (int, lintJSONDoc, string) {
	t.Helper()
	code, stdout, stderr := dagent(t, stdin, append([]string{"lint", "--format", "json"}, args...)...)
	var doc lintJSONDoc
	if stdout != "" {
		require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	}
	return code, doc, stderr
}

func checksOf(f lintJSONFile) []string {
	var checks []string
	for _, is := range f.Issues {
		checks = append(checks, is.Check)
	}
	return checks
}

func TestLintGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "sarif", "github"} {
		t.Run(format, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", append([]string{"lint", "--format", format}, lintSet...)...)
			assert.Equal(t, exitInvalid, code, "the mixed plan and the text have critical issues")
			assert.Empty(t, stderr)
			golden.Check(t, filepath.Join("testdata", "lint", format+".golden"), []byte(stdout))
		})
	}
}

// TestLintJSONShape: the document's shape is critic/report's (its tests
// and the json golden above pin it); here, what dagent lint puts in it.
func TestLintJSONShape(t *testing.T) {
	_, got, _ := lintJSONOut(t, "", lintSet...)
	assert.Equal(t, "testdata/lint/good.json", got.Files[0].Path)
	assert.Equal(t, 10, got.Files[0].Score)
	mixed := got.Files[1]
	sevs := map[critic.Severity]bool{}
	for _, is := range mixed.Issues {
		sevs[is.Severity] = true
	}
	assert.Equal(t, map[critic.Severity]bool{critic.Critical: true, critic.Warning: true, critic.Info: true}, sevs, "the mixed plan has an issue of every severity")
	notPlan := got.Files[2]
	require.Len(t, notPlan.Issues, 1)
	assert.Equal(t, lintJSONIssue{
		Check: string(plan.CodeNoJSON), Severity: critic.Critical,
		Message:        notPlan.Issues[0].Message,
		Recommendation: notPlan.Issues[0].Recommendation,
	}, notPlan.Issues[0], "a text that is not a plan is a critical issue at an unknown position (0, 0)")
}

func TestLintFailOn(t *testing.T) {
	tests := []struct {
		name   string
		stdin  string
		args   []string
		failOn string // "" for the default
		code   int
	}{
		{"good plan, default", "", []string{"testdata/lint/good.json"}, "", exitOK},
		{"good plan, info", "", []string{"testdata/lint/good.json"}, "info", exitOK},
		{"mixed plan, default (critical)", "", []string{mixedPlan}, "", exitInvalid},
		{"mixed plan, critical", "", []string{mixedPlan}, "critical", exitInvalid},
		{"mixed plan, info", "", []string{mixedPlan}, "info", exitInvalid},
		{"mixed plan, never", "", []string{mixedPlan}, "never", exitOK},
		{"warning only, default", warningPlan, []string{"-"}, "", exitOK},
		{"warning only, critical", warningPlan, []string{"-"}, "critical", exitOK},
		{"warning only, warning", warningPlan, []string{"-"}, "warning", exitInvalid},
		{"warning only, info", warningPlan, []string{"-"}, "info", exitInvalid},
		{"info only, warning", infoPlan, []string{"-"}, "warning", exitOK},
		{"info only, info", infoPlan, []string{"-"}, "info", exitInvalid},
		{"info only, never", infoPlan, []string{"-"}, "never", exitOK},
		{"not a plan, default", "", []string{"testdata/lint/not-a-plan.txt"}, "", exitInvalid},
		{"not a plan, never", "", []string{"testdata/lint/not-a-plan.txt"}, "never", exitOK},
		{"malformed JSON, default", "{\"tasks\": [\n  {\"id\": \"a\" \"input\": \"x\"}\n]}", []string{"-"}, "", exitInvalid},
		{"one bad file among good ones fails the call", "", []string{"testdata/lint/good.json", mixedPlan}, "", exitInvalid},
		{"worst file decides: warning in stdin", warningPlan, []string{"testdata/lint/good.json", "-"}, "warning", exitInvalid},
	}
	for _, tt := range tests {
		for _, format := range []string{"text", "json", "sarif", "github"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				args := []string{"lint", "--format", format}
				if tt.failOn != "" {
					args = append(args, "--fail-on", tt.failOn)
				}
				code, stdout, stderr := dagent(t, tt.stdin, append(args, tt.args...)...)
				assert.Equal(t, tt.code, code, "stdout %s\nstderr %s", stdout, stderr)
				assert.Empty(t, stderr, "findings go to stdout, whatever the exit code")
				if format != "github" {
					assert.NotEmpty(t, stdout)
				}
			})
		}
	}
}

func TestLintUsageAndIOErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing file", []string{"lint", "no/such/plan.json"}, exitUsage, "dagent: read plan: no/such/plan.json does not exist\n"},
		{"missing file after good ones prints nothing", []string{"lint", "testdata/lint/good.json", mixedPlan, "no/such/plan.json"}, exitUsage, "dagent: read plan: no/such/plan.json does not exist\n"},
		{"a directory without plans", []string{"lint", "../../docs"}, exitUsage, "dagent: lint: no plan under \"../../docs\"\n"},
		{"glob matching nothing", []string{"lint", "testdata/lint/good.json", "testdata/lint/*.yml"}, exitUsage, "dagent: lint: no file matches \"testdata/lint/*.yml\"\n"},
		{"bad glob", []string{"lint", "testdata/lint/[.json"}, exitUsage, "dagent: lint: bad glob \"testdata/lint/[.json\": syntax error in pattern\n"},
		{"stdin twice", []string{"lint", "-", "-"}, exitUsage, "dagent: lint: standard input (-) can be read only once\n"},
		{"bad format", []string{"lint", "--format", "xml", mixedPlan}, exitUsage, "dagent: unknown format \"xml\": use text, json, sarif or github\n"},
		{"bad fail-on", []string{"lint", "--fail-on", "error", mixedPlan}, exitUsage, "dagent: unknown --fail-on level \"error\": use critical, warning, info or never\n"},
		{"no plan", []string{"lint"}, exitUsage, "dagent: requires at least 1 arg(s), only received 0\n"},
		{"unknown flag", []string{"lint", "--frobnicate", mixedPlan}, exitUsage, "dagent: unknown flag: --frobnicate\n"},
		{"missing registry", []string{"lint", "--registry", "no/such/registry.yaml", mixedPlan}, exitUsage, "dagent: read registry: open no/such/registry.yaml: no such file or directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, `{"tasks": ["a"]}`, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Empty(t, stdout, "nothing is printed when a file cannot be read")
			assert.Equal(t, tt.stderr, stderr)
		})
	}
}

func TestLintInvalidRegistry(t *testing.T) {
	dir := writeFiles(t, map[string]string{"registry.yaml": "workers:\n  echo:\n    command: []\n"})
	code, stdout, stderr := dagent(t, "", "lint", "--registry", filepath.Join(dir, "registry.yaml"), mixedPlan)
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "registry.yaml")
	assert.NotContains(t, stderr, "dagent: ", "the registry's own message, as dagent run prints it")
}

func TestLintRegistry(t *testing.T) {
	const notes = `{"tasks": [{"id": "notes", "agent": "summarizer", "input": "Take notes on the papers."}]}`
	// Without a registry, nothing says whether the host runs summarizer:
	// a note on stderr, not an issue.
	code, without, stderr := lintJSONOut(t, notes, "-")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, checksOf(without.Files[0]), "unknown_agent")
	assert.NotContains(t, checksOf(without.Files[0]), "unknown_worker")
	assert.Equal(t, "<stdin>: note: "+noRegistry+`: agent "summarizer" is taken as a host worker, unchecked`+"\n", stderr)

	code, with, stderr := lintJSONOut(t, notes, "--registry", lintRegistry, "-")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, checksOf(with.Files[0]), "unknown_worker")
	assert.NotContains(t, checksOf(with.Files[0]), "unknown_agent")

	// A registry that has the worker clears the issue.
	dir := writeFiles(t, map[string]string{"registry.yaml": "workers:\n  summarizer:\n    command: [\"true\"]\n"})
	_, ok, _ := lintJSONOut(t, notes, "--registry", filepath.Join(dir, "registry.yaml"), "-")
	assert.NotContains(t, checksOf(ok.Files[0]), "unknown_worker")
	assert.NotContains(t, checksOf(ok.Files[0]), "unknown_agent")
}

func TestLintGlobs(t *testing.T) {
	paths := func(doc lintJSONDoc) []string {
		var out []string
		for _, f := range doc.Files {
			out = append(out, f.Path)
		}
		return out
	}
	// A quoted glob reaches dagent unexpanded; it expands it, sorted.
	code, doc, stderr := lintJSONOut(t, "", "testdata/lint/*.json")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, []string{"testdata/lint/good.json", mixedPlan}, paths(doc))

	// Files and globs mix, in argument order, each file once.
	_, doc, _ = lintJSONOut(t, "", "testdata/lint/not-a-plan.txt", "testdata/lint/*.json", "testdata/lint/good.json", "./testdata/lint/good.json", "testdata/lint/mixed.js?n")
	assert.Equal(t, []string{"testdata/lint/not-a-plan.txt", "testdata/lint/good.json", mixedPlan}, paths(doc))

	// Directories a glob matches are skipped; a glob matching only
	// directories matches nothing.
	dir := writeFiles(t, map[string]string{"a.json": `{"tasks": ["x"]}`})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.json"), 0o755))
	code, doc, stderr = lintJSONOut(t, "", filepath.Join(dir, "*.json"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{filepath.Join(dir, "a.json")}, paths(doc))
	code, _, stderr = lintJSONOut(t, "", filepath.Join(dir, "sub*"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no file matches")

	// A file whose name holds a glob character is still linted.
	odd := filepath.Join(dir, "plan[1].json")
	require.NoError(t, os.WriteFile(odd, []byte(`{"tasks": ["x"]}`), 0o600))
	code, doc, stderr = lintJSONOut(t, "", odd)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{odd}, paths(doc))
}

func TestLintStdin(t *testing.T) {
	mixed, err := os.ReadFile(mixedPlan)
	require.NoError(t, err)

	code, doc, stderr := lintJSONOut(t, string(mixed), "-")
	require.Equal(t, exitInvalid, code, stderr)
	require.Len(t, doc.Files, 1)
	assert.Equal(t, "-", doc.Files[0].Path)
	_, fromFile, _ := lintJSONOut(t, "", mixedPlan)
	assert.Equal(t, fromFile.Files[0].Issues, doc.Files[0].Issues, "standard input is reviewed like the file")

	_, text, _ := dagent(t, string(mixed), "lint", "-")
	assert.True(t, strings.HasPrefix(text, "<stdin>: score 4/10."), text)

	// GitHub annotations of standard input name no file.
	_, gh, _ := dagent(t, string(mixed), "lint", "-f", "github", "-")
	for _, line := range strings.Split(strings.TrimSpace(gh), "\n") {
		assert.Regexp(t, `^::(error|warning|notice) title=[a-z_]+::`, line)
	}

	// With files: "-" takes its place among them.
	_, doc, _ = lintJSONOut(t, string(mixed), "testdata/lint/good.json", "-")
	assert.Equal(t, "-", doc.Files[1].Path)
}

func TestLintText(t *testing.T) {
	code, stdout, _ := dagent(t, "", "lint", "testdata/lint/good.json")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "testdata/lint/good.json: score 10/10. The plan looks good: no issues found.\n\n1 file, 0 critical, 0 warnings, 0 info\n", stdout)
	assert.NotContains(t, stdout, "\x1b[", "no colour when stdout is not a terminal")

	// Issues are grouped by task, plan-level first, each task once.
	_, stdout, _ = dagent(t, "", "lint", mixedPlan)
	var groups []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			groups = append(groups, strings.TrimSpace(line))
		}
	}
	assert.Equal(t, []string{"plan", "task search", "task notes", "task brief"}, groups)
	assert.Regexp(t, `(?m)^    22:5 +critical  self_dependency +depends_on: the task depends on itself`, stdout)
	assert.Regexp(t, `(?m)^ {40}Remove the task from its own depends_on`, stdout, "the recommendation is indented below the message")

}

func TestLintUseColor(t *testing.T) {
	assert.False(t, useColor(&bytes.Buffer{}))
	regular, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	require.NoError(t, err)
	defer regular.Close()
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	assert.False(t, useColor(regular), "a regular file is not a terminal")

	// /dev/null is a character device, as a terminal is.
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no", os.DevNull)
	}
	defer devnull.Close()
	assert.True(t, useColor(devnull))
	t.Setenv("NO_COLOR", "1")
	assert.False(t, useColor(devnull), "NO_COLOR turns colour off")
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "dumb")
	assert.False(t, useColor(devnull), "a dumb terminal has no colour")
}

func TestLintGitHub(t *testing.T) {
	// A file name with the characters properties escape.
	dir := writeFiles(t, map[string]string{"a,b:c%.json": `{"tasks": [{"id": "x", "depends_on": ["x"]}]}`})
	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(dir)
	code, stdout, stderr := dagent(t, "", "lint", "-f", "github", "a,b:c%.json")
	t.Chdir(wd)
	require.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, "::error file=a%2Cb%3Ac%25.json,line=1,col=12,title=self_dependency::task x: depends_on: the task depends on itself (\"x\")%0ARemove the task from its own depends_on.\n", stdout)

	// A message with a newline stays one workflow command.
	const newline = "{\"tasks\": [{\"id\": \"a\\nb\", \"input\": \"x\", \"verification\": \"(> 1\"}]}"
	_, doc, _ := lintJSONOut(t, newline, "-")
	_, stdout, _ = dagent(t, newline, "lint", "-f", "github", "-")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	assert.Len(t, lines, len(doc.Files[0].Issues), stdout)
	for _, line := range lines {
		assert.True(t, strings.HasPrefix(line, "::"), line)
	}
	assert.Contains(t, stdout, "task a%0Ab: verification")
}

// The SARIF format itself is tested in critic/report; these check what
// the command gives it: its version and the working directory as the root.
type lintSARIFLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// sarifOut runs dagent lint --format sarif and decodes its output.
func sarifOut(t *testing.T, stdin string, args ...string) lintSARIFLog {
	t.Helper()
	_, stdout, stderr := dagent(t, stdin, append([]string{"lint", "-f", "sarif"}, args...)...)
	require.Empty(t, stderr)
	var doc lintSARIFLog
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	return doc
}

func TestLintSARIF(t *testing.T) {
	doc := sarifOut(t, "", lintSet...)
	require.Len(t, doc.Runs, 1)
	assert.Equal(t, "dagent", doc.Runs[0].Tool.Driver.Name)
	assert.Equal(t, buildVersion(), doc.Runs[0].Tool.Driver.Version, "the version `dagent version` prints")
}

func TestLintSARIFURIs(t *testing.T) {
	uriOf := func(doc lintSARIFLog) string {
		return doc.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI
	}
	abs, err := filepath.Abs(mixedPlan)
	require.NoError(t, err)
	assert.Equal(t, "testdata/lint/mixed.json", uriOf(sarifOut(t, "", abs)), "an absolute path inside the working directory becomes relative")

	dir := writeFiles(t, map[string]string{"my plan.json": `{"tasks": [{"id": "x", "depends_on": ["x"]}]}`})
	assert.Equal(t, "file://"+filepath.ToSlash(dir)+"/my%20plan.json", uriOf(sarifOut(t, "", filepath.Join(dir, "my plan.json"))), "outside the working directory: a file URI")

	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Chdir(dir)
	uri := uriOf(sarifOut(t, "", "my plan.json"))
	t.Chdir(wd)
	assert.Equal(t, "my%20plan.json", uri, "URIs are escaped")
}

func TestLintHelp(t *testing.T) {
	code, stdout, stderr := dagent(t, "", "lint", "--help")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	for _, want := range []string{"Usage:", "--fail-on", "text, json, sarif or github", "critical, warning, info or never"} {
		assert.Contains(t, stdout, want)
	}
	_, stdout, _ = dagent(t, "", "--help")
	assert.Contains(t, stdout, "lint")
}

// With a registry, plan agents may use only the registry's tools.
func TestLintRegistryTools(t *testing.T) {
	dir := t.TempDir()
	planPath := filepath.Join(dir, "p.json")
	regPath := filepath.Join(dir, "r.yaml")
	require.NoError(t, os.WriteFile(planPath, []byte(`{"agents": {"w": {"prompt": "You write.", "tools": ["search", "web_search"]}}, "tasks": [{"id": "a", "agent": "w", "input": "Write"}]}`), 0o600))
	require.NoError(t, os.WriteFile(regPath, []byte("tools:\n  search:\n    description: Searches\n    command: [\"echo\", \"x\"]\n"), 0o600))
	code, stdout, stderr := dagent(t, "", "lint", "--format", "json", planPath, "--registry", regPath)
	require.Equal(t, exitInvalid, code, stderr)
	assert.Contains(t, stdout, `"check": "unknown_tool"`)
	assert.Contains(t, stdout, `uses tool \"web_search\"`)
	assert.NotContains(t, stdout, `uses tool \"search\"`)

	code, _, stderr = dagent(t, "", "lint", planPath)
	assert.Equal(t, exitOK, code, "without a registry, tools are not checked: %s", stderr)
}

// A registry worker whose program is not on this machine is a warning of
// each task that names it.
func TestLintMissingProgram(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"registry.yaml": "workers:\n  git-log:\n    command: [\"sh\", \"-c\", \"git log\"]\n  changelog:\n    command: [\"changelog-gen\"]\n",
		"plan.json": `{"tasks": [
  {"id": "log", "agent": "git-log", "input": "Commits since v1.2.0"},
  {"id": "notes", "agent": "changelog", "input": "Write the changelog from {{results.log}}", "depends_on": ["log"]}
]}`,
	})
	t.Setenv("PATH", "/usr/bin:/bin")
	code, stdout, stderr := dagent(t, "", "lint", "--registry", filepath.Join(dir, "registry.yaml"), filepath.Join(dir, "plan.json"))
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `3:3  warning   missing_program  agent: worker "changelog": program not found: exec: "changelog-gen": executable file not found in $PATH`)
	assert.NotContains(t, stdout, `"git-log"`)

	code, _, stderr = dagent(t, "", "lint", "--fail-on", "warning", "--registry", filepath.Join(dir, "registry.yaml"), filepath.Join(dir, "plan.json"))
	assert.Equal(t, exitInvalid, code, stderr)
}
