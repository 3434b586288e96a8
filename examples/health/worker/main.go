// Command worker implements the command workers of the repository health
// example (examples/health). It is one program with a subcommand per worker:
//
//	worker vet     go vet on params.packages, findings as JSON
//	worker test    go test -json -short on params.packages, summarised
//	worker gofmt   gofmt -l over the repository's .go files
//	worker report  a Markdown summary of the three reports in depends
//
// Each reads one JSON request on standard input (the dagent command-worker
// protocol: task_id, input, depends, inputs, params, ...) and writes its JSON
// result on standard output. It exits 0 with a report whenever it could do
// its job, also when vet, the tests or gofmt find problems: the task's
// verification predicate decides whether the report is good enough. It exits
// 1, with the reason on standard error, only when it cannot do its job (no
// go.mod above the working directory, a bad package pattern, go missing).
//
// The workers find the repository root themselves: the nearest directory
// above the working directory that holds go.mod.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// request is the JSON request a command worker reads on standard input.
type request struct {
	RunID          string         `json:"run_id"`
	TaskID         string         `json:"task_id"`
	Agent          string         `json:"agent"`
	Input          string         `json:"input"`
	Attempt        int            `json:"attempt"`
	Diagnosis      string         `json:"diagnosis"`
	Depends        map[string]any `json:"depends"`
	Skipped        []string       `json:"skipped"`
	Inputs         map[string]any `json:"inputs"`
	Params         map[string]any `json:"params"`
	IdempotencyKey string         `json:"idempotency_key"`
}

var workers = map[string]func(ctx context.Context, req request) (any, error){
	"vet":    runVet,
	"test":   runTest,
	"gofmt":  runGofmt,
	"report": runReport,
}

func main() {
	if len(os.Args) != 2 || workers[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: worker vet|test|gofmt|report < request.json")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := run(ctx, os.Args[1], os.Stdin)
	if err == nil {
		err = writeJSON(os.Stdout, out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(ctx context.Context, name string, stdin io.Reader) (any, error) {
	req, err := readRequest(stdin)
	if err != nil {
		return nil, err
	}
	return workers[name](ctx, req)
}

func readRequest(r io.Reader) (request, error) {
	var req request
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		if errors.Is(err, io.EOF) {
			return req, errors.New("expected a JSON request on standard input, got nothing")
		}
		return req, fmt.Errorf("reading the JSON request on standard input: %w", err)
	}
	return req, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// repoRoot returns the nearest directory at or above dir that holds go.mod.
func repoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod in %s or any directory above it; run the worker inside the repository", dir)
		}
		d = parent
	}
}

func workRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return repoRoot(wd)
}

// stringList reads a list of strings (or one string) from a params value.
func stringList(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// packagePatterns reads params.packages: local package patterns such as
// "./plan/...". The plan is untrusted text, so a pattern must be a path
// inside the repository: nothing absolute, nothing above the root, and
// nothing the go command could take for a flag.
func packagePatterns(params map[string]any) ([]string, error) {
	raw, ok := params["packages"]
	if !ok {
		return nil, errors.New(`params.packages is required: a list of package patterns relative to the repository root, such as ["./plan/...", "./verify/..."]`)
	}
	pats, ok := stringList(raw)
	if !ok || len(pats) == 0 {
		return nil, fmt.Errorf("params.packages must be a non-empty list of package patterns, found %v", raw)
	}
	for _, p := range pats {
		if err := checkPattern(p); err != nil {
			return nil, err
		}
	}
	return pats, nil
}

func checkPattern(p string) error {
	if p != "." && !strings.HasPrefix(p, "./") {
		return fmt.Errorf("package pattern %q must be relative to the repository root and start with \"./\"", p)
	}
	rest := strings.TrimSuffix(strings.TrimPrefix(p, "./"), "...")
	rest = strings.TrimSuffix(rest, "/")
	if rest != "" && rest != "." && !filepath.IsLocal(rest) {
		return fmt.Errorf("package pattern %q leaves the repository", p)
	}
	return nil
}

// goCmd runs the go command in root and returns its standard output,
// standard error and exit error.
func goCmd(ctx context.Context, root string, args ...string) (stdout, stderr []byte, err error) {
	bin, err := exec.LookPath("go")
	if err != nil {
		return nil, nil, fmt.Errorf("the go command is not on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// tail returns the last n lines of b, trimmed.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// listPackages expands package patterns to import paths with go list. A
// pattern that names no directory or matches no package is an error: the
// worker cannot do its job.
func listPackages(ctx context.Context, root string, patterns []string) ([]string, error) {
	args := append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{with .Error}}{{.Err}}{{end}}"}, patterns...)
	out, stderr, err := goCmd(ctx, root, args...)
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v\n%s", strings.Join(patterns, " "), err, tail(stderr, 20))
	}
	var pkgs, bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, msg, _ := strings.Cut(line, "\t")
		if path == "" {
			continue
		}
		if strings.HasPrefix(path, ".") || strings.HasPrefix(msg, "pattern ") {
			bad = append(bad, msg)
			continue
		}
		pkgs = append(pkgs, path)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("bad package pattern: %s", strings.Join(bad, "; "))
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("the patterns %s match no packages\n%s", strings.Join(patterns, " "), tail(stderr, 20))
	}
	return pkgs, nil
}

// --- vet ---

// vetReport is the result of the vet worker.
type vetReport struct {
	Packages []string     `json:"packages"`
	Findings []vetFinding `json:"findings"`
}

// vetFinding is one diagnostic of go vet (or a type error that stopped it).
type vetFinding struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
	// Text is the finding as go vet prints it: file:line:col: message.
	Text string `json:"text"`
}

var vetLine = regexp.MustCompile(`^(?:vet: )?(\S.*?\.go):(\d+)(?::(\d+))?: (.+)$`)

// parseVet reads go vet's standard error. Findings are returned with their
// file relative to root; lines that are neither findings nor package headers
// (# pkg, which go vet prints only before some of a package's findings) are
// returned as other.
func parseVet(output, root string) (findings []vetFinding, other []string) {
	findings = []vetFinding{}
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		m := vetLine.FindStringSubmatch(line)
		if m == nil {
			other = append(other, line)
			continue
		}
		file := m[1]
		if filepath.IsAbs(file) && root != "" {
			if rel, err := filepath.Rel(root, file); err == nil && filepath.IsLocal(rel) {
				file = rel
			}
		}
		file = filepath.ToSlash(strings.TrimPrefix(file, "./"))
		f := vetFinding{File: file, Message: m[4]}
		f.Line, _ = strconv.Atoi(m[2])
		f.Column, _ = strconv.Atoi(m[3])
		f.Text = file + ":" + m[2]
		if m[3] != "" {
			f.Text += ":" + m[3]
		}
		f.Text += ": " + m[4]
		findings = append(findings, f)
	}
	return findings, other
}

func runVet(ctx context.Context, req request) (any, error) {
	root, err := workRoot()
	if err != nil {
		return nil, err
	}
	patterns, err := packagePatterns(req.Params)
	if err != nil {
		return nil, err
	}
	pkgs, err := listPackages(ctx, root, patterns)
	if err != nil {
		return nil, err
	}
	_, stderr, err := goCmd(ctx, root, append([]string{"vet"}, patterns...)...)
	findings, other := parseVet(string(stderr), root)
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && len(findings) > 0 && ctx.Err() == nil:
		// go vet exits 1 when it reports findings: that is a report.
	default:
		return nil, fmt.Errorf("go vet: %v\n%s", err, strings.Join(lastN(other, 20), "\n"))
	}
	return vetReport{Packages: pkgs, Findings: findings}, nil
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// --- test ---

// testReport is the result of the test worker. Passed, Failed and Skipped
// count top-level tests; a package that fails without a failing test (a
// build failure, a panic in TestMain, a timeout) counts as one failure too,
// so Failed is always len(Failures).
type testReport struct {
	Packages int      `json:"packages"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"skipped"`
	Failures []string `json:"failures"`
	// Output holds the last lines of output of each failure, by the name
	// in Failures.
	Output map[string]string `json:"failure_output,omitempty"`
}

// testEvent is one line of go test -json (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string
}

const outputLines = 30

// parseTestJSON summarises the output of go test -json. Lines that are not
// JSON events are ignored.
func parseTestJSON(r io.Reader) (testReport, error) {
	rep := testReport{Failures: []string{}}
	outputs := map[string][]string{}  // by "pkg.Test", "pkg" or build ImportPath
	pkgFailed := map[string]bool{}    // packages with a failing top-level test
	failures := map[string][]string{} // failure name -> keys in outputs
	addOut := func(key, text string) {
		lines := append(outputs[key], strings.TrimRight(text, "\n"))
		if len(lines) > 2*outputLines {
			lines = lines[len(lines)-outputLines:]
		}
		outputs[key] = lines
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev testEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			continue
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		switch {
		case ev.Action == "build-output":
			addOut(ev.ImportPath, ev.Output)
		case ev.Action == "output" && ev.Test != "":
			addOut(ev.Package+"."+top, ev.Output)
		case ev.Action == "output":
			addOut(ev.Package, ev.Output)
		case ev.Test != "" && ev.Test == top: // a top-level test ends
			switch ev.Action {
			case "pass":
				rep.Passed++
			case "skip":
				rep.Skipped++
			case "fail":
				rep.Failed++
				name := ev.Package + "." + ev.Test
				rep.Failures = append(rep.Failures, name)
				failures[name] = []string{name}
				pkgFailed[ev.Package] = true
			}
		case ev.Test == "" && ev.Package != "": // a package ends
			switch ev.Action {
			case "pass", "skip":
				rep.Packages++
			case "fail":
				rep.Packages++
				if pkgFailed[ev.Package] {
					break
				}
				rep.Failed++
				name, keys := ev.Package+" [package failed]", []string{ev.Package}
				if ev.FailedBuild != "" && ev.FailedBuild != ev.Package {
					name, keys = ev.Package+" [build failed]", []string{ev.FailedBuild, ev.Package}
				} else if ev.FailedBuild != "" {
					name = ev.Package + " [build failed]"
				}
				rep.Failures = append(rep.Failures, name)
				failures[name] = keys
			}
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("reading go test -json output: %w", err)
	}
	sort.Strings(rep.Failures)
	for name, keys := range failures {
		var lines []string
		for _, k := range keys {
			lines = append(lines, outputs[k]...)
		}
		lines = lastN(lines, outputLines)
		if len(lines) == 0 {
			continue
		}
		if rep.Output == nil {
			rep.Output = map[string]string{}
		}
		rep.Output[name] = strings.Join(lines, "\n")
	}
	return rep, nil
}

func runTest(ctx context.Context, req request) (any, error) {
	root, err := workRoot()
	if err != nil {
		return nil, err
	}
	patterns, err := packagePatterns(req.Params)
	if err != nil {
		return nil, err
	}
	if _, err := listPackages(ctx, root, patterns); err != nil {
		return nil, err
	}
	stdout, stderr, err := goCmd(ctx, root, append([]string{"test", "-json", "-short"}, patterns...)...)
	rep, perr := parseTestJSON(bytes.NewReader(stdout))
	if perr != nil {
		return nil, perr
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && rep.Packages > 0 && ctx.Err() == nil:
		// go test exits 1 when a test or a build fails: that is a report.
	default:
		return nil, fmt.Errorf("go test: %v\n%s", err, tail(stderr, 20))
	}
	return rep, nil
}

// --- gofmt ---

// gofmtReport is the result of the gofmt worker.
type gofmtReport struct {
	Files       int      `json:"files"`
	Unformatted []string `json:"unformatted"`
	// Errors lists files gofmt cannot parse.
	Errors []string `json:"errors"`
}

// skipDir reports whether the go command would skip a directory of that
// name: testdata, vendor, and names starting with "." or "_".
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// gofmtCheck reports whether src is formatted as gofmt formats it.
func gofmtCheck(src []byte) (bool, error) {
	out, err := format.Source(src)
	if err != nil {
		return false, err
	}
	return bytes.Equal(out, src), nil
}

// gofmtTree checks every .go file under root (the directories in dirs,
// relative to root), skipping what the go command skips and nested modules.
func gofmtTree(root string, dirs []string) (gofmtReport, error) {
	rep := gofmtReport{Unformatted: []string{}, Errors: []string{}}
	for _, dir := range dirs {
		start := filepath.Join(root, dir)
		err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path == start {
					return nil
				}
				if skipDir(d.Name()) {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
				return nil
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".go") {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rep.Files++
			ok, err := gofmtCheck(src)
			switch {
			case err != nil:
				rep.Errors = append(rep.Errors, rel+": "+err.Error())
			case !ok:
				rep.Unformatted = append(rep.Unformatted, rel)
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
	}
	sort.Strings(rep.Unformatted)
	sort.Strings(rep.Errors)
	return rep, nil
}

func runGofmt(_ context.Context, req request) (any, error) {
	root, err := workRoot()
	if err != nil {
		return nil, err
	}
	dirs := []string{"."}
	if raw, ok := req.Params["paths"]; ok {
		list, ok := stringList(raw)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("params.paths must be a non-empty list of directories relative to the repository root, found %v", raw)
		}
		for _, d := range list {
			if d != "." && !filepath.IsLocal(d) {
				return nil, fmt.Errorf("params.paths: %q is not a directory inside the repository", d)
			}
		}
		dirs = list
	}
	return gofmtTree(root, dirs)
}

// --- report ---

// number reads a JSON number (json.Number or float64) as an int.
func number(v any) (int, bool) {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n), true
		}
		f, err := v.Float64()
		return int(f), err == nil
	case float64:
		return int(v), true
	case int:
		return v, true
	}
	return 0, false
}

func field(m map[string]any, key string) any {
	if m == nil {
		return nil
	}
	return m[key]
}

// slot returns the wired input named name, else the field key of the
// dependency dep.
func slot(req request, name, dep, key string) any {
	if v, ok := req.Inputs[name]; ok {
		return v
	}
	d, _ := req.Depends[dep].(map[string]any)
	return field(d, key)
}

func stringsOf(v any) []string {
	list, _ := stringList(v)
	return list
}

// findDep returns the dependency whose output looks like a report of the
// given kind: the one named by id when there is one, else the first whose
// output has all the keys.
func findDep(depends map[string]any, id string, keys ...string) (string, map[string]any) {
	has := func(m map[string]any) bool {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return true
	}
	if m, ok := depends[id].(map[string]any); ok && has(m) {
		return id, m
	}
	ids := make([]string, 0, len(depends))
	for k := range depends {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	for _, k := range ids {
		if m, ok := depends[k].(map[string]any); ok && has(m) {
			return k, m
		}
	}
	return id, nil
}

// plural returns "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// renderReport turns the vet, test and gofmt reports into Markdown.
func renderReport(req request) string {
	title := "Repository health"
	if t, ok := req.Params["title"].(string); ok && strings.TrimSpace(t) != "" {
		title = strings.TrimSpace(t)
	}
	vetID, vet := findDep(req.Depends, "vet", "findings")
	testID, test := findDep(req.Depends, "test", "passed", "failed")
	fmtID, gofmt := findDep(req.Depends, "gofmt", "unformatted")

	type row struct{ check, status, detail string }
	var rows []row
	var sections []string
	problems := 0
	notRun := func(check, id string) row {
		problems++
		why := "no report"
		for _, s := range req.Skipped {
			if s == id {
				why = "skipped"
			}
		}
		return row{check, "⚠️ not run", why}
	}

	if vet == nil {
		rows = append(rows, notRun("go vet", vetID))
	} else {
		findings, _ := slot(req, "findings", vetID, "findings").([]any)
		pkgs, _ := vet["packages"].([]any)
		if len(findings) == 0 {
			rows = append(rows, row{"go vet", "✅ clean", "no findings in " + plural(len(pkgs), "package")})
		} else {
			problems++
			rows = append(rows, row{"go vet", "❌ findings", plural(len(findings), "finding") + " in " + plural(len(pkgs), "package")})
			var b strings.Builder
			b.WriteString("## go vet findings\n\n")
			for _, f := range findings {
				fm, _ := f.(map[string]any)
				text, _ := fm["text"].(string)
				if text == "" {
					text = fmt.Sprint(f)
				}
				fmt.Fprintf(&b, "- `%s`\n", text)
			}
			sections = append(sections, b.String())
		}
	}

	if test == nil {
		rows = append(rows, notRun("go test", testID))
	} else {
		passed, _ := number(test["passed"])
		failed, _ := number(test["failed"])
		skipped, _ := number(test["skipped"])
		pkgs, _ := number(test["packages"])
		detail := fmt.Sprintf("%d passed, %d failed, %d skipped in %s", passed, failed, skipped, plural(pkgs, "package"))
		failures := stringsOf(slot(req, "failures", testID, "failures"))
		if failed == 0 && len(failures) == 0 {
			rows = append(rows, row{"go test", "✅ passing", detail})
		} else {
			problems++
			rows = append(rows, row{"go test", "❌ failing", detail})
			var b strings.Builder
			b.WriteString("## Failing tests\n\n")
			for _, f := range failures {
				fmt.Fprintf(&b, "- `%s`\n", f)
			}
			sections = append(sections, b.String())
		}
	}

	if gofmt == nil {
		rows = append(rows, notRun("gofmt", fmtID))
	} else {
		files, _ := number(gofmt["files"])
		bad := stringsOf(slot(req, "unformatted", fmtID, "unformatted"))
		errs := stringsOf(gofmt["errors"])
		if len(bad) == 0 && len(errs) == 0 {
			rows = append(rows, row{"gofmt", "✅ formatted", plural(files, "file") + " checked"})
		} else {
			problems++
			rows = append(rows, row{"gofmt", "❌ unformatted", fmt.Sprintf("%d of %s need gofmt -w, %d do not parse", len(bad), plural(files, "file"), len(errs))})
			var b strings.Builder
			b.WriteString("## Files needing gofmt\n\n")
			for _, f := range append(bad, errs...) {
				fmt.Fprintf(&b, "- `%s`\n", f)
			}
			sections = append(sections, b.String())
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	if problems == 0 {
		b.WriteString("**Healthy**: every check passed.\n\n")
	} else {
		fmt.Fprintf(&b, "**Needs attention**: %d of %d checks did not pass.\n\n", problems, len(rows))
	}
	b.WriteString("| check | status | detail |\n| --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.check, r.status, r.detail)
	}
	for _, s := range sections {
		b.WriteString("\n")
		b.WriteString(s)
	}
	return b.String()
}

func runReport(_ context.Context, req request) (any, error) {
	if len(req.Depends) == 0 {
		return nil, errors.New("no reports to summarise: depends is empty; the report task must depend on the vet, test and gofmt tasks")
	}
	return renderReport(req), nil
}
