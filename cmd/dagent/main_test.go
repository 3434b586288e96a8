package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dagent runs the CLI in-process.
func dagent(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"fmt-research", []string{"fmt", "../../examples/research.json"}},
		{"fmt-llm-answer", []string{"fmt", "../../examples/llm-answer.md"}},
		{"graph-research-json", []string{"graph", "../../examples/research.json"}},
		{"graph-research-mermaid", []string{"graph", "--format", "mermaid", "../../examples/research.json"}},
		{"graph-research-dot", []string{"graph", "-f", "dot", "../../examples/research.json"}},
		{"graph-research-md", []string{"graph", "../../examples/research.json", "--format=md"}},
		{"graph-llm-answer-json", []string{"graph", "../../examples/llm-answer.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", tt.args...)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			golden.Check(t, filepath.Join("testdata", tt.name+".golden"), []byte(stdout))
		})
	}
}

func TestFmtIsIdempotent(t *testing.T) {
	_, first, _ := dagent(t, "", "fmt", "../../examples/llm-answer.md")
	code, second, stderr := dagent(t, first, "fmt", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, first, second)
}

func TestFmtWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"steps": ["a", {"name": "b", "after": "task_1"}]}`), 0o600))

	code, stdout, stderr := dagent(t, "", "fmt", "-w", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)

	written, err := os.ReadFile(path)
	require.NoError(t, err)
	_, want, _ := dagent(t, `{"steps": ["a", {"name": "b", "after": "task_1"}]}`, "fmt", "-")
	assert.Equal(t, want, string(written))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "fmt -w keeps the file's permissions")
}

func TestInvalidPlans(t *testing.T) {
	tests := []struct {
		name   string
		stdin  string
		stderr []string
	}{
		{
			name:  "parse and validation problems together, in source order",
			stdin: `{"tasks": [{"id": "a", "depends_on": "b", "type": "gate"}, {"id": "b", "requires": ["a"], "timeout": 30}]}`,
			stderr: []string{
				"task a: depends_on: dependency cycle: a -> b -> a [cycle]",
				`task b: timeout: timeout must be a duration with a unit such as "30s" or "2m", found 30 [invalid_timeout]`,
			},
		},
		{
			name:   "not a plan at all",
			stdin:  "I cannot help with that.",
			stderr: []string{`plan: no JSON object found: expected a plan object such as {"tasks": [...]} [no_json]`},
		},
		{
			name:   "malformed JSON names line and column",
			stdin:  "{\"tasks\": [\n  {\"id\": \"a\" \"input\": \"x\"}\n]}",
			stderr: []string{`plan: invalid JSON at line 2, column 14: invalid character '"' after object member; expected ',' or '}' [invalid_json]`},
		},
		{
			name:   "empty plan",
			stdin:  `{"tasks": []}`,
			stderr: []string{"plan: tasks: the plan has no tasks [empty_plan]"},
		},
		{
			// Without a registry, an agent the plan does not define is a
			// host worker nothing can check: a note, not a problem.
			name:  "unknown agent and missing dependency",
			stdin: `{"tasks": [{"id": "a", "agent": "ghost"}, {"id": "b", "depends_on": ["A"]}]}`,
			stderr: []string{
				`task b: depends_on: depends on "A", which is not a task of the plan; did you mean "a"? [missing_dependency]`,
				`note: no --registry given (nor DAGENT_REGISTRY, registry: in .dagent.yaml, or registry.yaml beside the plan): agent "ghost" is taken as a host worker, unchecked`,
			},
		},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"fmt", "graph"} {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				code, stdout, stderr := dagent(t, tt.stdin, cmd, "-")
				assert.Equal(t, exitInvalid, code)
				assert.Empty(t, stdout, "an invalid plan prints nothing on stdout")
				assert.Equal(t, strings.Join(tt.stderr, "\n")+"\n", stderr)
			})
		}
	}
}

func TestUsageAndIOErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"missing file", []string{"fmt", "no/such/plan.json"}, "dagent: read plan: no/such/plan.json does not exist\n"},
		{"no plan argument", []string{"fmt"}, "dagent: accepts 1 arg(s), received 0\n"},
		{"two plan arguments", []string{"graph", "a.json", "b.json"}, "dagent: accepts 1 arg(s), received 2\n"},
		{"unknown format", []string{"graph", "--format", "png", "../../examples/research.json"}, "dagent: unknown format \"png\": use json, mermaid, dot or md\n"},
		{"unknown flag", []string{"fmt", "--frobnicate", "x.json"}, "dagent: unknown flag: --frobnicate\n"},
		{"unknown command", []string{"frobnicate"}, "dagent: unknown command \"frobnicate\" for \"dagent\"\n"},
		{"write to stdin", []string{"fmt", "-w", "-"}, "dagent: fmt: -w needs a file, not standard input\n"},
		{"schema takes no argument", []string{"schema", "x"}, "dagent: unknown command \"x\" for \"dagent schema\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, `{"tasks": ["a"]}`, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Equal(t, tt.stderr, stderr)
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"fmt", "--help"}, {"graph", "--help"}, {"verify", "--help"}, {"schema", "--help"}, {"version", "--help"}, {"help", "graph"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", args...)
			assert.Equal(t, exitOK, code)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "Usage:")
		})
	}
	_, stdout, _ := dagent(t, "", "graph", "--help")
	assert.Contains(t, stdout, "json, mermaid, dot or md")
}

func TestSchema(t *testing.T) {
	code, stdout, stderr := dagent(t, "", "schema")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, string(plan.Schema()), stdout)
	assert.Contains(t, stdout, "https://json-schema.org/draft/2020-12/schema")
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := dagent(t, "", "version")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^dagent \S+ go1\.\d+`, stdout)
}

func TestVerify(t *testing.T) {
	const items = `(if (> (count (get data/result "items")) 1) true (str "expected 2+ items, got " (count (get data/result "items"))))`
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"passes", "", []string{items, "--result", `{"items": [1, 2]}`}, exitOK, "passed\n", ""},
		{"fails with the diagnosis", "", []string{items, "--result", `{"items": [1]}`}, exitInvalid, "failed: expected 2+ items, got 1\n", ""},
		{"false quotes the predicate", "", []string{"(nil? data/result)", "--result", "1"}, exitInvalid, "failed: predicate returned false: (nil? data/result)\n", ""},
		{"input that is not JSON is a string", "", []string{`(= data/input "hello world")`, "--input", "hello world"}, exitOK, "passed\n", ""},
		{"depends", "", []string{`(= (count data/result) (count (get-in data/depends ["fetch" "items"])))`, "--result", `[1, 2]`, "--depends", `{"fetch": {"items": ["a", "b"]}}`}, exitOK, "passed\n", ""},
		{"integers stay integers", "", []string{`(int? (get data/result "n"))`, "--result", `{"n": 9007199254740993}`}, exitOK, "passed\n", ""},
		{"predicate from stdin", `(string? data/result)`, []string{"-", "--result", "text"}, exitOK, "passed\n", ""},
		{"json passes", "", []string{"--format", "json", items, "--result", `{"items": [1, 2]}`}, exitOK, `{"version":1,"passed":true}` + "\n", ""},
		{"json fails", "", []string{"-f", "json", items, "--result", `{"items": []}`}, exitInvalid, `{"version":1,"passed":false,"diagnosis":"expected 2+ items, got 0"}` + "\n", ""},
		{"json runtime error", "", []string{"-f", "json", "(> data/result 0)"}, exitUsage, `{"version":1,"error":"1:1: (> data/result 0): cannot compare nil with the number 0","exit_code":2}` + "\n", ""},
		{"compile error with caret", "", []string{"(> (count data/result) 0"}, exitUsage, "", "dagent: 1:1: unclosed \"(\": expected ')' before the end of the predicate\n  (> (count data/result) 0\n  ^\n"},
		{"unknown function", "", []string{"(frobnicate data/result)"}, exitUsage, "", "dagent: 1:2: unknown function frobnicate\n  (frobnicate data/result)\n   ^\n"},
		{"depends is not an object", "", []string{"true", "--depends", "[1]"}, exitUsage, "", "dagent: --depends must be a JSON object of results by task id, e.g. '{\"fetch\": {\"items\": []}}'\n"},
		{"bad format", "", []string{"true", "--format", "yaml"}, exitUsage, "", "dagent: unknown format \"yaml\": use text or json\n"},
		{"no predicate", "", nil, exitUsage, "", "dagent: accepts 1 arg(s), received 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, tt.stdin, append([]string{"verify"}, tt.args...)...)
			assert.Equal(t, tt.code, code, "stdout %q, stderr %q", stdout, stderr)
			if tt.stdout != "" || tt.code == exitOK {
				assert.Equal(t, tt.stdout, stdout)
			}
			assert.Equal(t, tt.stderr, stderr)
		})
	}
}
