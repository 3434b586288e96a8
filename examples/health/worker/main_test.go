package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseTestJSON(t *testing.T) {
	const pkg = "example.com/m/a"
	tests := []struct {
		name  string
		lines []string
		want  testReport
		// outputHas maps a failure to text its failure_output must hold.
		outputHas map[string]string
	}{
		{
			name: "all pass, one skip, a package without tests",
			lines: []string{
				`{"Action":"start","Package":"example.com/m/a"}`,
				`{"Action":"run","Package":"example.com/m/a","Test":"TestOne"}`,
				`{"Action":"output","Package":"example.com/m/a","Test":"TestOne","Output":"=== RUN   TestOne\n"}`,
				`{"Action":"pass","Package":"example.com/m/a","Test":"TestOne","Elapsed":0}`,
				`{"Action":"run","Package":"example.com/m/a","Test":"TestTwo"}`,
				`{"Action":"run","Package":"example.com/m/a","Test":"TestTwo/sub"}`,
				`{"Action":"pass","Package":"example.com/m/a","Test":"TestTwo/sub","Elapsed":0}`,
				`{"Action":"pass","Package":"example.com/m/a","Test":"TestTwo","Elapsed":0}`,
				`{"Action":"skip","Package":"example.com/m/a","Test":"TestSlow","Elapsed":0}`,
				`{"Action":"output","Package":"example.com/m/a","Output":"ok  \texample.com/m/a\t0.01s\n"}`,
				`{"Action":"pass","Package":"example.com/m/a","Elapsed":0.01}`,
				`{"Action":"start","Package":"example.com/m/b"}`,
				`{"Action":"output","Package":"example.com/m/b","Output":"?   \texample.com/m/b\t[no test files]\n"}`,
				`{"Action":"skip","Package":"example.com/m/b","Elapsed":0}`,
			},
			want: testReport{Packages: 2, Passed: 2, Skipped: 1, Failures: []string{}},
		},
		{
			name: "a failing subtest fails its top-level test once",
			lines: []string{
				`{"Action":"run","Package":"example.com/m/a","Test":"TestBad"}`,
				`{"Action":"output","Package":"example.com/m/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}`,
				`{"Action":"run","Package":"example.com/m/a","Test":"TestBad/sub"}`,
				`{"Action":"output","Package":"example.com/m/a","Test":"TestBad/sub","Output":"    a_test.go:6: boom\n"}`,
				`{"Action":"fail","Package":"example.com/m/a","Test":"TestBad/sub","Elapsed":0}`,
				`{"Action":"fail","Package":"example.com/m/a","Test":"TestBad","Elapsed":0}`,
				`{"Action":"pass","Package":"example.com/m/a","Test":"TestOK","Elapsed":0}`,
				`{"Action":"fail","Package":"example.com/m/a","Elapsed":0.1}`,
			},
			want:      testReport{Packages: 1, Passed: 1, Failed: 1, Failures: []string{pkg + ".TestBad"}},
			outputHas: map[string]string{pkg + ".TestBad": "a_test.go:6: boom"},
		},
		{
			name: "a build failure is one failure of the package",
			lines: []string{
				`{"ImportPath":"example.com/m/a [example.com/m/a.test]","Action":"build-output","Output":"# example.com/m/a\n"}`,
				`{"ImportPath":"example.com/m/a [example.com/m/a.test]","Action":"build-output","Output":"a/a.go:3:23: undefined: x\n"}`,
				`{"ImportPath":"example.com/m/a [example.com/m/a.test]","Action":"build-fail"}`,
				`{"Action":"start","Package":"example.com/m/a"}`,
				`{"Action":"output","Package":"example.com/m/a","Output":"FAIL\texample.com/m/a [build failed]\n"}`,
				`{"Action":"fail","Package":"example.com/m/a","Elapsed":0,"FailedBuild":"example.com/m/a [example.com/m/a.test]"}`,
			},
			want:      testReport{Packages: 1, Failed: 1, Failures: []string{pkg + " [build failed]"}},
			outputHas: map[string]string{pkg + " [build failed]": "undefined: x"},
		},
		{
			name: "a package that fails without a failing test",
			lines: []string{
				`{"Action":"pass","Package":"example.com/m/a","Test":"TestOK","Elapsed":0}`,
				`{"Action":"output","Package":"example.com/m/a","Output":"panic: test timed out after 10m0s\n"}`,
				`{"Action":"fail","Package":"example.com/m/a","Elapsed":600}`,
			},
			want:      testReport{Packages: 1, Passed: 1, Failed: 1, Failures: []string{pkg + " [package failed]"}},
			outputHas: map[string]string{pkg + " [package failed]": "timed out"},
		},
		{
			name: "failures are sorted and noise is ignored",
			lines: []string{
				`go: downloading example.com/dep v1.0.0`,
				``,
				`{not json`,
				`{"Action":"fail","Package":"example.com/m/b","Test":"TestZ","Elapsed":0}`,
				`{"Action":"fail","Package":"example.com/m/a","Test":"TestY","Elapsed":0}`,
				`{"Action":"fail","Package":"example.com/m/b","Elapsed":0}`,
				`{"Action":"fail","Package":"example.com/m/a","Elapsed":0}`,
			},
			want: testReport{Packages: 2, Failed: 2, Failures: []string{"example.com/m/a.TestY", "example.com/m/b.TestZ"}},
		},
		{
			name:  "no output at all",
			lines: nil,
			want:  testReport{Failures: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTestJSON(strings.NewReader(strings.Join(tt.lines, "\n")))
			if err != nil {
				t.Fatal(err)
			}
			out := got.Output
			got.Output = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if got.Failed != len(got.Failures) {
				t.Errorf("failed = %d but %d failures", got.Failed, len(got.Failures))
			}
			for name, text := range tt.outputHas {
				if !strings.Contains(out[name], text) {
					t.Errorf("failure_output[%q] = %q, want it to contain %q", name, out[name], text)
				}
			}
		})
	}
}

func TestParseVet(t *testing.T) {
	root := filepath.FromSlash("/repo")
	tests := []struct {
		name      string
		output    string
		want      []vetFinding
		wantOther []string
	}{
		{
			name:   "clean",
			output: "",
			want:   []vetFinding{},
		},
		{
			name: "findings, type errors and headers",
			output: "# example.com/m/b\n# [example.com/m/b]\n" +
				"vet: b/b.go:3:23: undefined: undefined\n" +
				"a/a.go:5:24: fmt.Printf format %d has arg \"x\" of wrong type string\n" +
				"./c/c.go:7: unreachable code\n",
			want: []vetFinding{
				{File: "b/b.go", Line: 3, Column: 23, Message: "undefined: undefined", Text: "b/b.go:3:23: undefined: undefined"},
				{File: "a/a.go", Line: 5, Column: 24, Message: `fmt.Printf format %d has arg "x" of wrong type string`, Text: `a/a.go:5:24: fmt.Printf format %d has arg "x" of wrong type string`},
				{File: "c/c.go", Line: 7, Message: "unreachable code", Text: "c/c.go:7: unreachable code"},
			},
		},
		{
			name:   "absolute paths become relative to the root",
			output: filepath.Join(root, "plan", "x.go") + ":1:2: bad\n",
			want:   []vetFinding{{File: "plan/x.go", Line: 1, Column: 2, Message: "bad", Text: "plan/x.go:1:2: bad"}},
		},
		{
			name:      "other lines are kept apart",
			output:    "pattern ./nope/...: lstat ./nope/: no such file or directory\n",
			want:      []vetFinding{},
			wantOther: []string{"pattern ./nope/...: lstat ./nope/: no such file or directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, other := parseVet(tt.output, root)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings:\ngot  %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(other, tt.wantOther) {
				t.Errorf("other: got %q, want %q", other, tt.wantOther)
			}
		})
	}
}

func TestCheckPattern(t *testing.T) {
	tests := []struct {
		pattern string
		ok      bool
	}{
		{"./plan/...", true},
		{"./...", true},
		{".", true},
		{"./verify", true},
		{"plan/...", false},
		{"../other/...", false},
		{"./../other", false},
		{"/etc", false},
		{"-vettool=/bin/sh", false},
		{"-exec=rm", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			if err := checkPattern(tt.pattern); (err == nil) != tt.ok {
				t.Errorf("checkPattern(%q) = %v, want ok=%v", tt.pattern, err, tt.ok)
			}
		})
	}
}

func TestGofmtTree(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":               "module example.com/m\n",
		"good.go":              "package m\n\nfunc F() {}\n",
		"a/bad.go":             "package a\nfunc  F( ) {}\n",
		"a/broken.go":          "package a\nfunc {\n",
		"a/notes.txt":          "func  F( ) {}\n",
		"a/testdata/skip.go":   "package  skipped\n",
		".hidden/skip.go":      "package  skipped\n",
		"_tools/skip.go":       "package  skipped\n",
		"vendor/x/skip.go":     "package  skipped\n",
		"nested/go.mod":        "module example.com/nested\n",
		"nested/skip.go":       "package  skipped\n",
		"b/c/deep_formated.go": "package c\n\nvar X = 1\n",
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		dirs []string
		want gofmtReport
	}{
		{[]string{"."}, gofmtReport{Files: 4, Unformatted: []string{"a/bad.go"}, Errors: []string{"a/broken.go"}}},
		{[]string{"b"}, gofmtReport{Files: 1, Unformatted: []string{}, Errors: []string{}}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.dirs, ","), func(t *testing.T) {
			got, err := gofmtTree(root, tt.dirs)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range got.Errors { // keep the file, not the parser's wording
				got.Errors[i], _, _ = strings.Cut(e, ": ")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "examples", "health", "worker")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, deep} {
		got, err := repoRoot(dir)
		if err != nil || got != root {
			t.Errorf("repoRoot(%q) = %q, %v; want %q", dir, got, err, root)
		}
	}
}

// decode reads a request as the worker does: numbers as json.Number.
func decode(t *testing.T, src string) request {
	t.Helper()
	req, err := readRequest(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestRenderReport(t *testing.T) {
	healthy := `{"depends": {
		"vet": {"packages": ["a", "b"], "findings": []},
		"test": {"packages": 2, "passed": 10, "failed": 0, "skipped": 1, "failures": []},
		"gofmt": {"files": 7, "unformatted": [], "errors": []}}}`
	tests := []struct {
		name    string
		request string
		has     []string
		hasNot  []string
	}{
		{
			name:    "healthy",
			request: healthy,
			has: []string{"# Repository health\n", "**Healthy**", "| go vet | ✅ clean | no findings in 2 packages |",
				"| go test | ✅ passing | 10 passed, 0 failed, 1 skipped in 2 packages |", "| gofmt | ✅ formatted | 7 files checked |"},
			hasNot: []string{"## "},
		},
		{
			name: "problems everywhere, lists from inputs",
			request: `{"params": {"title": "My repo"},
				"depends": {
					"vet": {"packages": ["a"], "findings": [{"text": "a/a.go:1:2: bad"}]},
					"test": {"packages": 1, "passed": 3, "failed": 1, "skipped": 0, "failures": ["m/a.TestX"]},
					"gofmt": {"files": 1, "unformatted": ["a/a.go"], "errors": []}},
				"inputs": {"failures": ["m/a.TestX"], "unformatted": ["a/a.go"]}}`,
			has: []string{"# My repo\n", "**Needs attention**: 3 of 3 checks", "1 finding in 1 package",
				"- `a/a.go:1:2: bad`", "## Failing tests", "- `m/a.TestX`", "## Files needing gofmt", "- `a/a.go`"},
		},
		{
			name: "a skipped check and dependencies named otherwise",
			request: `{"skipped": ["unit"], "depends": {
				"lint": {"packages": ["a"], "findings": []},
				"format": {"files": 2, "unformatted": [], "errors": []}}}`,
			has: []string{"| go vet | ✅ clean |", "| go test | ⚠️ not run | no report |", "| gofmt | ✅ formatted | 2 files checked |",
				"**Needs attention**: 1 of 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := renderReport(decode(t, tt.request))
			for _, s := range tt.has {
				if !strings.Contains(md, s) {
					t.Errorf("report lacks %q:\n%s", s, md)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(md, s) {
					t.Errorf("report has %q:\n%s", s, md)
				}
			}
		})
	}
}

func TestRunReportNeedsDepends(t *testing.T) {
	if _, err := runReport(t.Context(), request{}); err == nil {
		t.Fatal("runReport with no depends: want an error")
	}
	out, err := runReport(t.Context(), decode(t, `{"depends": {"vet": {"packages": [], "findings": []}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.(string); !ok {
		t.Fatalf("runReport returned %T, want a Markdown string", out)
	}
	if b, _ := json.Marshal(out); len(b) < 10 {
		t.Fatalf("report %s is too short", b)
	}
}

func TestPackagePatterns(t *testing.T) {
	tests := []struct {
		params string
		want   []string
		ok     bool
	}{
		{`{"packages": ["./plan/...", "./verify/..."]}`, []string{"./plan/...", "./verify/..."}, true},
		{`{"packages": "./plan/..."}`, []string{"./plan/..."}, true},
		{`{}`, nil, false},
		{`{"packages": []}`, nil, false},
		{`{"packages": [1]}`, nil, false},
		{`{"packages": ["./a", "-toolexec=x"]}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			req := decode(t, `{"params": `+tt.params+`}`)
			got, err := packagePatterns(req.Params)
			if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("packagePatterns(%s) = %q, %v; want %q, ok=%v", tt.params, got, err, tt.want, tt.ok)
			}
		})
	}
}
