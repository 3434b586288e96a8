package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixed set of files every format is checked on: a good plan, a plan
// with critical, warning and info issues, and a text that is not a plan.
// The paths and goldens are those of `dagent lint`'s tests, so the
// library's output is checked against the command's.
var fixedSet = []string{"testdata/lint/good.json", "testdata/lint/mixed.json", "testdata/lint/not-a-plan.txt"}

const mixedPlan = "testdata/lint/mixed.json"

// catalog is a registry with one worker and no tools.
type catalog map[string][]string

func (c catalog) WorkerOutputs(name string) ([]string, bool) {
	slots, ok := c[name]
	return slots, ok
}

func (catalog) HasTool(string) bool { return false }

// review reads and reviews paths.
func review(t *testing.T, paths []string, opts ...critic.Option) []File {
	t.Helper()
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		files = append(files, File{Path: p, Report: critic.ReviewSource(data, opts...)})
	}
	return files
}

// write prints files in format f and returns the output.
func write(t *testing.T, f Format, files []File, opts Options) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, f, files, opts))
	return buf.String()
}

// dagentOptions are the options `dagent lint` passes in its tests.
func dagentOptions(t *testing.T) Options {
	wd, err := os.Getwd()
	require.NoError(t, err)
	return Options{Root: wd, Tool: Tool{Version: "devel"}}
}

func TestGolden(t *testing.T) {
	files := review(t, fixedSet)
	for _, f := range []Format{Text, JSON, SARIF, GitHub} {
		t.Run(string(f), func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", "lint", string(f)+".golden"), []byte(write(t, f, files, dagentOptions(t))))
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{Text, JSON, SARIF, GitHub} {
		got, err := ParseFormat(string(f))
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	for _, bad := range []string{"", "xml", "TEXT", " json"} {
		_, err := ParseFormat(bad)
		assert.ErrorIs(t, err, ErrUnknownFormat, bad)
	}
	_, err := ParseFormat("xml")
	assert.EqualError(t, err, `unknown format "xml": use text, json, sarif or github`)
}

func TestWriteUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, "xml", review(t, fixedSet), Options{})
	assert.ErrorIs(t, err, ErrUnknownFormat)
	assert.Empty(t, buf.String(), "nothing is written")
}

// failingWriter fails every write.
type failingWriter struct{}

var errWrite = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteError(t *testing.T) {
	files := review(t, fixedSet)
	for _, f := range []Format{Text, JSON, SARIF, GitHub} {
		assert.ErrorIs(t, Write(failingWriter{}, f, files, Options{}), errWrite, f)
	}
}

func TestNoFiles(t *testing.T) {
	assert.Equal(t, "0 files, 0 critical, 0 warnings, 0 info\n", write(t, Text, nil, Options{}))
	assert.Equal(t, "{\n  \"version\": 1,\n  \"files\": []\n}\n", write(t, JSON, nil, Options{}))
	assert.Empty(t, write(t, GitHub, nil, Options{}))
	sarif := write(t, SARIF, nil, Options{})
	assert.Contains(t, sarif, `"results": []`)
	assert.Contains(t, sarif, `"rules": []`)
	require.NoError(t, validateSARIF(t, sarifSchemaFor(t), sarif))
}

func TestJSONShape(t *testing.T) {
	out := write(t, JSON, review(t, fixedSet), Options{})
	var doc struct {
		Files []map[string]json.RawMessage `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Files, 3)
	for _, f := range doc.Files {
		assert.ElementsMatch(t, []string{"path", "score", "summary", "issues", "recommendations"}, slices.Collect(maps.Keys(f)))
		assert.True(t, bytes.HasPrefix(f["issues"], []byte("[")), "issues is an array, never null: %s", f["issues"])
		assert.True(t, bytes.HasPrefix(f["recommendations"], []byte("[")), "recommendations is an array, never null: %s", f["recommendations"])
		var issues []map[string]any
		require.NoError(t, json.Unmarshal(f["issues"], &issues))
		for _, is := range issues {
			assert.ElementsMatch(t, []string{"check", "severity", "task_id", "field", "message", "recommendation", "line", "column"}, slices.Collect(maps.Keys(is)))
		}
	}

	var got jsonDoc
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	notPlan := got.Files[2]
	require.Len(t, notPlan.Issues, 1)
	assert.Equal(t, jsonIssue{
		Check: string(plan.CodeNoJSON), Severity: critic.Critical,
		Message:        notPlan.Issues[0].Message,
		Recommendation: notPlan.Issues[0].Recommendation,
	}, notPlan.Issues[0], "a text that is not a plan is a critical issue at an unknown position (0, 0)")
}

func TestText(t *testing.T) {
	assert.Equal(t, "testdata/lint/good.json: score 10/10. The plan looks good: no issues found.\n\n1 file, 0 critical, 0 warnings, 0 info\n",
		write(t, Text, review(t, fixedSet[:1]), Options{}))

	// Issues are grouped by task, plan-level first, each task once.
	out := write(t, Text, review(t, []string{mixedPlan}), Options{})
	var groups []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			groups = append(groups, strings.TrimSpace(line))
		}
	}
	assert.Equal(t, []string{"plan", "task search", "task notes", "task brief"}, groups)
	assert.Regexp(t, `(?m)^    16:5 +critical  unknown_agent +agent: agent "summarizer" is not defined`, out)
	assert.Regexp(t, `(?m)^ {40}Define the agent in the plan's agents`, out, "the recommendation is indented below the message")
	assert.NotContains(t, out, "\x1b[", "no colour unless asked")

	// Standard input is named <stdin>.
	data, err := os.ReadFile(mixedPlan)
	require.NoError(t, err)
	out = write(t, Text, []File{{Path: Stdin, Report: critic.ReviewSource(data)}}, Options{})
	assert.True(t, strings.HasPrefix(out, "<stdin>: score 4/10."), out)
}

func TestTextColour(t *testing.T) {
	files := []File{{Path: "p.json", Report: critic.ReviewSource([]byte(`{"tasks": [{"id": "a", "agent": "ghost", "on_failure": "retry", "max_retries": 0}, {"id": "b", "input": "x"}, {"id": "c", "depends_on": ["b"]}]}`))}}
	coloured := write(t, Text, files, Options{Colour: true})
	assert.Contains(t, coloured, "\x1b[31mcritical\x1b[0m  ")
	assert.Contains(t, coloured, "\x1b[33mwarning\x1b[0m   ")
	assert.Contains(t, coloured, "\x1b[34minfo\x1b[0m      ")
	plain := write(t, Text, files, Options{})
	assert.Equal(t, plain, regexp.MustCompile("\x1b\\[[0-9]*m").ReplaceAllString(coloured, ""), "colour changes nothing else")
}

// TestTextKeepsTerminalSafe checks that the text of a hostile plan —
// escape sequences and a bidirectional override in its agent names, path
// and mission — reaches no report as it is; only the colours are codes.
func TestTextKeepsTerminalSafe(t *testing.T) {
	files := []File{{Path: "p\x1b]0;pwned\x07.json", Report: critic.ReviewSource([]byte(`{"mission": "m\u001b[2J", "tasks": [{"id": "a", "agent": "gh\u001b]52;c;eA==\u0007ost\u202e"}]}`))}}
	for _, format := range []Format{Text, GitHub} {
		for _, colour := range []bool{false, true} {
			out := write(t, format, files, Options{Colour: colour})
			plain := regexp.MustCompile("\x1b\\[[0-9]*m").ReplaceAllString(out, "")
			assert.NotContains(t, plain, "\x1b", "%s colour=%v:\n%s", format, colour, out)
			assert.NotContains(t, plain, "\u202e", "%s colour=%v", format, colour)
			assert.Contains(t, plain, `p\u001b]0;pwned\u0007.json`, "%s colour=%v", format, colour)
		}
	}
}

func TestGitHub(t *testing.T) {
	assert.Equal(t, "100%25 done%0Aline 2%0D: a, b", githubData("100% done\nline 2\r: a, b"))
	assert.Equal(t, "a%3Ab%2Cc%25d%0Ae%0D", githubProperty("a:b,c%d\ne\r"))

	// A file name with the characters properties escape.
	files := []File{{Path: "a,b:c%.json", Report: critic.ReviewSource([]byte(`{"tasks": [{"id": "x", "agent": "ghost"}]}`))}}
	assert.Equal(t, "::error file=a%2Cb%3Ac%25.json,line=1,col=12,title=unknown_agent::task x: agent: agent \"ghost\" is not defined in the plan's agents and is not a registry worker%0ADefine the agent in the plan's agents, name a registry worker, or use \"default\".\n",
		write(t, GitHub, files, Options{}))

	// A message with a newline stays one workflow command; standard input
	// names no file.
	rep := critic.ReviewSource([]byte("{\"tasks\": [{\"id\": \"a\\nb\", \"input\": \"x\", \"verification\": \"(> 1\"}]}"))
	out := write(t, GitHub, []File{{Path: Stdin, Report: rep}}, Options{})
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Len(t, lines, len(rep.Issues), out)
	for _, line := range lines {
		assert.Regexp(t, `^::(error|warning|notice) title=[a-z_]+::`, line)
	}
	assert.Contains(t, out, "task a%0Ab: verification")
}

func TestRepoPath(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		path, root, want string
	}{
		{"plans/a.json", "", "plans/a.json"},
		{"./plans//x/../a.json", "", "plans/a.json"},
		{Stdin, root, Stdin},
		{filepath.Join(root, "plans", "a.json"), root, "plans/a.json"},
		{filepath.Join(root, "plans", "a.json"), "", filepath.ToSlash(filepath.Join(root, "plans", "a.json"))},
		{filepath.Join(filepath.Dir(root), "other.json"), root, filepath.ToSlash(filepath.Join(filepath.Dir(root), "other.json"))},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, repoPath(tt.path, tt.root), "%s in %q", tt.path, tt.root)
	}
}

// sarifSchemaFor compiles the official SARIF 2.1.0 JSON schema (OASIS,
// errata01), testdata/sarif-schema-2.1.0.json. It was taken verbatim from
// the Go module github.com/owenrumney/go-sarif/v3 v3.3.1
// (pkg/report/v210/sarif/schema.go, a public-domain module that embeds the
// schema as a string), fetched with `go mod download` through the Go module
// proxy; its "id" is
// https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json.
func sarifSchemaFor(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	require.NoError(t, c.AddResource(id, doc))
	sch, err := c.Compile(id)
	require.NoError(t, err)
	return sch
}

func validateSARIF(t *testing.T, sch *jsonschema.Schema, doc string) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	require.NoError(t, err, doc)
	return sch.Validate(inst)
}

func TestSARIFSchema(t *testing.T) {
	sch := sarifSchemaFor(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	abs, err := filepath.Abs(mixedPlan)
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), "my plan.json")
	require.NoError(t, os.WriteFile(outside, []byte(`{"tasks": [{"id": "x", "agent": "ghost"}]}`), 0o600))
	mixed, err := os.ReadFile(mixedPlan)
	require.NoError(t, err)
	tests := map[string]struct {
		files []File
		opts  Options
	}{
		"fixed set":             {review(t, fixedSet), dagentOptions(t)},
		"good plan only":        {review(t, fixedSet[:1]), Options{}},
		"absolute path, root":   {review(t, []string{abs}), Options{Root: wd}},
		"absolute path, none":   {review(t, []string{abs}), Options{}},
		"outside the root":      {review(t, []string{outside}), Options{Root: wd}},
		"standard input":        {[]File{{Path: Stdin, Report: critic.ReviewSource(mixed)}}, Options{}},
		"with a catalog":        {review(t, []string{mixedPlan}, critic.WithCatalog(catalog{"translator": {"text"}})), Options{}},
		"every plan problem":    {review(t, fixedSet), Options{Tool: Tool{Name: "acme", Version: "1.2.3", InformationURI: "https://example.com/acme"}}},
		"a reviewer's own rule": {unknownCheck(), Options{}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, validateSARIF(t, sch, write(t, SARIF, tt.files, tt.opts)))
		})
	}
}

func TestSARIFSchemaRejectsBrokenLogs(t *testing.T) {
	sch := sarifSchemaFor(t)
	good := write(t, SARIF, review(t, fixedSet), dagentOptions(t))
	require.NoError(t, validateSARIF(t, sch, good))

	broken := map[string]func(doc map[string]any){
		"no version":          func(doc map[string]any) { delete(doc, "version") },
		"wrong version":       func(doc map[string]any) { doc["version"] = "2.0.0" },
		"unknown top-level":   func(doc map[string]any) { doc["frobnicate"] = true },
		"no tool":             func(doc map[string]any) { delete(sarifRunOf(doc), "tool") },
		"no driver name":      func(doc map[string]any) { delete(sarifDriverOf(doc), "name") },
		"severity as a level": func(doc map[string]any) { sarifResultOf(doc)["level"] = "critical" },
		"line 0":              func(doc map[string]any) { sarifRegionOf(doc)["startLine"] = 0 },
		"message not object":  func(doc map[string]any) { sarifResultOf(doc)["message"] = "text" },
		"bad column kind":     func(doc map[string]any) { sarifRunOf(doc)["columnKind"] = "bytes" },
	}
	for name, breakIt := range broken {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(good), &doc))
			breakIt(doc)
			b, err := json.Marshal(doc)
			require.NoError(t, err)
			assert.Error(t, validateSARIF(t, sch, string(b)))
		})
	}
}

func sarifRunOf(doc map[string]any) map[string]any {
	return doc["runs"].([]any)[0].(map[string]any)
}

func sarifDriverOf(doc map[string]any) map[string]any {
	return sarifRunOf(doc)["tool"].(map[string]any)["driver"].(map[string]any)
}

func sarifResultOf(doc map[string]any) map[string]any {
	return sarifRunOf(doc)["results"].([]any)[0].(map[string]any)
}

func sarifRegionOf(doc map[string]any) map[string]any {
	loc := sarifResultOf(doc)["locations"].([]any)[0].(map[string]any)
	return loc["physicalLocation"].(map[string]any)["region"].(map[string]any)
}

// sarifOf prints files as SARIF and decodes the log.
func sarifOf(t *testing.T, files []File, opts Options) sarifLog {
	t.Helper()
	out := write(t, SARIF, files, opts)
	var doc sarifLog
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	return doc
}

func TestSARIF(t *testing.T) {
	doc := sarifOf(t, review(t, fixedSet), Options{})
	require.Len(t, doc.Runs, 1)
	run := doc.Runs[0]
	assert.Equal(t, sarifDriver{Name: "dagent", InformationURI: "https://github.com/dagent-dev/dagent", Rules: run.Tool.Driver.Rules}, run.Tool.Driver, "the zero Tool is dagent without a version")

	// One rule per check found, each result pointing at its rule.
	var found []string
	for _, r := range run.Results {
		if !slices.Contains(found, r.RuleID) {
			found = append(found, r.RuleID)
		}
		require.Less(t, r.RuleIndex, len(run.Tool.Driver.Rules))
		assert.Equal(t, r.RuleID, run.Tool.Driver.Rules[r.RuleIndex].ID)
		require.Len(t, r.Locations, 1)
		assert.GreaterOrEqual(t, r.Locations[0].PhysicalLocation.Region.StartLine, 1, "GitHub requires a region")
		assert.Len(t, r.PartialFingerprints[sarifFingerprint], 32)
	}
	var rules []string
	for _, r := range run.Tool.Driver.Rules {
		rules = append(rules, r.ID)
		assert.NotEmpty(t, r.Help.Text)
		assert.NotEmpty(t, r.Help.Markdown)
	}
	assert.ElementsMatch(t, found, rules)
	levels := map[string]string{}
	for _, r := range run.Results {
		levels[r.RuleID] = r.Level
	}
	assert.Equal(t, map[string]string{"unknown_key": "warning", "optimism_bias": "warning", "unknown_agent": "error", "disconnected_flow": "note", "no_json": "error"}, levels)

	tool := Tool{Name: "acme", Version: "1.2.3", InformationURI: "https://example.com/acme"}
	driver := sarifOf(t, review(t, fixedSet), Options{Tool: tool}).Runs[0].Tool.Driver
	assert.Equal(t, tool, Tool{Name: driver.Name, Version: driver.Version, InformationURI: driver.InformationURI})
}

func TestSARIFURIs(t *testing.T) {
	uriOf := func(doc sarifLog) string {
		return doc.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	abs, err := filepath.Abs(mixedPlan)
	require.NoError(t, err)
	mixed := func(path string) []File {
		return []File{{Path: path, Report: review(t, []string{mixedPlan})[0].Report}}
	}
	assert.Equal(t, "testdata/lint/mixed.json", uriOf(sarifOf(t, mixed(abs), Options{Root: wd})), "an absolute path inside the root becomes relative")
	assert.Equal(t, "file://"+filepath.ToSlash(abs), uriOf(sarifOf(t, mixed(abs), Options{})), "without a root an absolute path stays absolute")
	assert.Equal(t, "testdata/lint/mixed.json", uriOf(sarifOf(t, mixed("./testdata//lint/../lint/mixed.json"), Options{})), "paths are cleaned")

	dir := t.TempDir()
	assert.Equal(t, "file://"+filepath.ToSlash(dir)+"/my%20plan.json", uriOf(sarifOf(t, mixed(filepath.Join(dir, "my plan.json")), Options{Root: wd})), "outside the root: a file URI")
	assert.Equal(t, "my%20plan.json", uriOf(sarifOf(t, mixed("my plan.json"), Options{})), "URIs are escaped")
}

func TestSARIFFingerprints(t *testing.T) {
	mixed, err := os.ReadFile(mixedPlan)
	require.NoError(t, err)
	prints := func(path, src string) map[string]int {
		out := map[string]int{}
		for _, r := range sarifOf(t, []File{{Path: path, Report: critic.ReviewSource([]byte(src))}}, Options{}).Runs[0].Results {
			out[r.PartialFingerprints[sarifFingerprint]] = r.Locations[0].PhysicalLocation.Region.StartLine
		}
		return out
	}
	before := prints(Stdin, string(mixed))
	after := prints(Stdin, "\n\n\n"+string(mixed))
	require.Len(t, before, 5, "every issue has its own fingerprint")
	for fp, line := range before {
		assert.Equal(t, line+3, after[fp], "the fingerprint does not change when lines move")
	}
	for fp := range prints("other.json", string(mixed)) {
		assert.NotContains(t, before, fp, "it changes with the file")
	}
}

// unknownCheck is a file whose issues come from a reviewer's own check,
// which has no rule.
func unknownCheck() []File {
	return []File{{Path: "p.json", Report: critic.Report{Issues: []critic.Issue{
		{Check: "llm_review", Severity: critic.Info, Message: "a"},
		{Check: "llm_review", Severity: critic.Warning, Message: "b"},
	}}}}
}

func TestSARIFUnknownCheck(t *testing.T) {
	doc := sarifOf(t, unknownCheck(), Options{})
	rule := doc.Runs[0].Tool.Driver.Rules[0]
	assert.Equal(t, "llm_review", rule.ID)
	assert.Equal(t, "warning", rule.DefaultConfiguration.Level, "the worst severity it was found with")
}
