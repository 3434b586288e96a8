package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

// Output formats of dagent lint.
const (
	lintText   = "text"
	lintJSON   = "json"
	lintSARIF  = "sarif"
	lintGitHub = "github"
)

// failNever is the --fail-on level that never fails.
const failNever = "never"

// stdinPath is the argument that reads a plan from standard input.
const stdinPath = "-"

type lintFlags struct {
	format   string
	registry string
	failOn   string
}

func newLint() *cobra.Command {
	var f lintFlags
	cmd := &cobra.Command{
		Use:   "lint [--format F] [--registry FILE] [--fail-on LEVEL] PLAN...",
		Short: "Check plans statically and report their issues",
		Long: `Check plans without running them: the structural problems plan validation
finds, predicates that do not compile or can never pass, agents that are not
workers of the registry (--registry), and design smells such as wide phases
without a synthesis gate, retries without a budget or dependencies a task
never uses. Every issue has a severity (critical, warning or info), a check
name, the task and field it is about, its line and column, and a
recommendation; every file gets a score from 1 to 10.

PLAN is a path, a glob (quoted or not: "plans/*.json"; ** is not supported),
or - for standard input; give as many as you like. A text that is not a plan
at all is not an error: it is reported as a critical issue of that file.

Formats: text (grouped by file and task, for people), json ({"files": [{"path",
"score", "summary", "issues": [{"check", "severity", "task_id", "field",
"message", "recommendation", "line", "column"}], "recommendations"}]}), sarif
(SARIF 2.1.0, for GitHub code scanning and other SARIF viewers) and github
(workflow commands that annotate the files in a GitHub Actions run). Line and
column are 0 when unknown.

Exit codes: 0 no issue at or above --fail-on in any file, 1 some file has one
(or the registry is invalid), 2 usage or I/O error (a file that cannot be
read, a glob that matches nothing, a bad flag). --fail-on never always exits
0 once every file was read.`,
		Example: `  dagent lint plan.json
  dagent lint --fail-on warning 'plans/*.json' 'plans/*/*.json'
  dagent lint --registry registry.yaml --format sarif plans/*.json > dagent.sarif
  llm-tool "write a plan" | dagent lint -
  # in a GitHub Actions step: annotations on the pull request's files
  dagent lint --format github --fail-on warning plans/*.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return lint(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.format, "format", "f", lintText, "output format: text, json, sarif or github")
	fl.StringVar(&f.registry, "registry", "", "registry file (YAML or JSON) of the workers tasks may name")
	fl.StringVar(&f.failOn, "fail-on", string(critic.Critical), "exit 1 when an issue of this severity or worse is found: critical, warning, info or never")
	return cmd
}

// lintFile is the review of one file.
type lintFile struct {
	path   string // as given, or as the glob matched it; "-" for stdin
	report critic.Report
}

func lint(cmd *cobra.Command, args []string, f lintFlags) error {
	switch f.format {
	case lintText, lintJSON, lintSARIF, lintGitHub:
	default:
		return fmt.Errorf("unknown format %q: use text, json, sarif or github", f.format)
	}
	var failOn critic.Severity
	if f.failOn != failNever {
		var err error
		if failOn, err = critic.ParseSeverity(f.failOn); err != nil {
			return fmt.Errorf("unknown --fail-on level %q: use critical, warning, info or never", f.failOn)
		}
	}
	paths, err := lintPaths(args)
	if err != nil {
		return err
	}
	reg, err := loadRegistry(cmd, f.registry)
	if err != nil {
		return err
	}
	var opts []critic.Option
	if reg != nil {
		opts = append(opts, critic.WithCatalog(reg))
	}
	// Every file is read before anything is printed, so that an I/O error
	// does not leave a partial report behind.
	files := make([]lintFile, 0, len(paths))
	for _, path := range paths {
		data, err := read(cmd.InOrStdin(), path, "plan")
		if err != nil {
			return err
		}
		files = append(files, lintFile{path: path, report: critic.ReviewSource(data, opts...)})
	}

	var buf bytes.Buffer
	switch f.format {
	case lintText:
		writeLintText(&buf, files, useColor(cmd.OutOrStdout()))
	case lintJSON:
		err = writeLintJSON(&buf, files)
	case lintSARIF:
		err = writeSARIF(&buf, files)
	case lintGitHub:
		writeGitHub(&buf, files)
	}
	if err != nil {
		return err
	}
	if _, err := cmd.OutOrStdout().Write(buf.Bytes()); err != nil {
		return err
	}
	if failOn == "" {
		return nil
	}
	for _, file := range files {
		if file.report.Has(failOn) {
			return exitCode(exitInvalid)
		}
	}
	return nil
}

// lintPaths expands the arguments into the files to review, in argument
// order, each once. Globs are expanded here so that quoted globs work the
// same on every shell; a glob that matches no file is a usage error, and
// so is a second "-".
func lintPaths(args []string) ([]string, error) {
	var paths []string
	seen := make(map[string]bool)
	add := func(p string) {
		key := p
		if p != stdinPath {
			key = filepath.Clean(p)
		}
		if !seen[key] {
			seen[key] = true
			paths = append(paths, p)
		}
	}
	stdin := false
	for _, arg := range args {
		switch {
		case arg == stdinPath:
			if stdin {
				return nil, errors.New("lint: standard input (-) can be read only once")
			}
			stdin = true
			add(arg)
		case !hasGlobMeta(arg):
			add(arg)
		default:
			matches, err := filepath.Glob(arg)
			if err != nil {
				return nil, fmt.Errorf("lint: bad glob %q: %w", arg, err)
			}
			n := 0
			for _, m := range matches {
				// A glob such as plans/* also matches directories; only
				// files are plans.
				if info, err := os.Stat(m); err == nil && info.IsDir() {
					continue
				}
				add(m)
				n++
			}
			if n == 0 {
				// A file whose name holds a glob character is still a
				// file.
				if _, err := os.Lstat(arg); err == nil {
					add(arg)
					continue
				}
				return nil, fmt.Errorf("lint: no file matches %q", arg)
			}
		}
	}
	return paths, nil
}

// hasGlobMeta reports whether path holds a character filepath.Match
// treats specially.
func hasGlobMeta(path string) bool {
	magic := `*?[`
	if filepath.Separator != '\\' {
		magic = `*?[\`
	}
	return strings.ContainsAny(path, magic)
}

// displayPath names a file in the text format.
func displayPath(path string) string {
	if path == stdinPath {
		return "<stdin>"
	}
	return path
}

// where names what an issue is about: "task ID: FIELD" or "plan: FIELD".
func where(is critic.Issue) string {
	s := "plan"
	if is.TaskID != "" {
		s = "task " + is.TaskID
	}
	if is.Field != "" {
		s += ": " + is.Field
	}
	return s
}

// lintCounts counts the issues of every file by severity.
func lintCounts(files []lintFile) (critical, warning, info int) {
	for _, f := range files {
		critical += f.report.Count(critic.Critical)
		warning += f.report.Count(critic.Warning)
		info += f.report.Count(critic.Info)
	}
	return critical, warning, info
}

// ANSI colours of the severities in the text format.
var severityColor = map[critic.Severity]string{
	critic.Critical: "\x1b[31m", // red
	critic.Warning:  "\x1b[33m", // yellow
	critic.Info:     "\x1b[34m", // blue
}

const colorReset = "\x1b[0m"

// useColor reports whether the text format may colour w: w is a terminal,
// NO_COLOR is unset or empty (https://no-color.org) and TERM is not dumb.
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// writeLintText prints the reports for people: a header per file with its
// score and summary, then the issues grouped by task, plan-level first,
// each with its recommendation below, and a final count.
func writeLintText(w io.Writer, files []lintFile, color bool) {
	for i, f := range files {
		if i > 0 {
			fmt.Fprintln(w)
		}
		rep := f.report
		fmt.Fprintf(w, "%s: score %d/10. %s\n", displayPath(f.path), rep.Score, rep.Summary)
		if len(rep.Issues) == 0 {
			continue
		}
		posWidth, checkWidth := 0, 0
		for _, is := range rep.Issues {
			posWidth = max(posWidth, len(is.Pos.String()))
			checkWidth = max(checkWidth, len(is.Check))
		}
		indent := strings.Repeat(" ", 4+posWidth+2+len(critic.Critical)+2+checkWidth+2)
		for _, group := range groupByTask(rep.Issues) {
			if group[0].TaskID == "" {
				fmt.Fprintln(w, "  plan")
			} else {
				fmt.Fprintf(w, "  task %s\n", group[0].TaskID)
			}
			for _, is := range group {
				sev := fmt.Sprintf("%-*s", len(critic.Critical), is.Severity)
				if c, ok := severityColor[is.Severity]; ok && color {
					sev = c + string(is.Severity) + colorReset + sev[len(is.Severity):]
				}
				msg := is.Message
				if is.Field != "" {
					msg = is.Field + ": " + msg
				}
				fmt.Fprintf(w, "    %-*s  %s  %-*s  %s\n", posWidth, is.Pos, sev, checkWidth, is.Check, flatLine(msg))
				if is.Recommendation != "" {
					fmt.Fprintf(w, "%s%s\n", indent, flatLine(is.Recommendation))
				}
			}
		}
	}
	crit, warn, info := lintCounts(files)
	if len(files) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s, %d critical, %s, %d info\n", plural(len(files), "file"), crit, plural(warn, "warning"), info)
}

// groupByTask groups issues by task in order of first appearance, the
// plan-level issues first.
func groupByTask(issues []critic.Issue) [][]critic.Issue {
	index := make(map[string]int)
	var groups [][]critic.Issue
	if slices.ContainsFunc(issues, func(is critic.Issue) bool { return is.TaskID == "" }) {
		index[""] = 0
		groups = append(groups, nil)
	}
	for _, is := range issues {
		k, ok := index[is.TaskID]
		if !ok {
			k = len(groups)
			index[is.TaskID] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], is)
	}
	return groups
}

// flatLine keeps a message on its line: a task id or a JSON error can
// hold a newline, which would break the layout.
func flatLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// The --format json document.
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

func writeLintJSON(w io.Writer, files []lintFile) error {
	doc := lintJSONDoc{Files: make([]lintJSONFile, 0, len(files))}
	for _, f := range files {
		jf := lintJSONFile{
			Path:            f.path,
			Score:           f.report.Score,
			Summary:         f.report.Summary,
			Issues:          make([]lintJSONIssue, 0, len(f.report.Issues)),
			Recommendations: append([]string{}, f.report.Recommendations...),
		}
		for _, is := range f.report.Issues {
			line, col := position(is.Pos)
			jf.Issues = append(jf.Issues, lintJSONIssue{
				Check: is.Check, Severity: is.Severity, TaskID: is.TaskID, Field: is.Field,
				Message: is.Message, Recommendation: is.Recommendation, Line: line, Column: col,
			})
		}
		doc.Files = append(doc.Files, jf)
	}
	return jsonv.EncodeIndent(w, doc, "  ")
}

// position is the line and column of pos, 0 and 0 when unknown.
func position(pos plan.Position) (line, column int) {
	if !pos.IsValid() {
		return 0, 0
	}
	return pos.Line, max(pos.Column, 0)
}

// repoPath is path as a CI service expects it: relative to the working
// directory (the repository's root in CI) when it is inside it, with
// forward slashes.
func repoPath(path string) string {
	if path == stdinPath {
		return path
	}
	if filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, path); err == nil && filepath.IsLocal(rel) {
				path = rel
			}
		}
	}
	return filepath.ToSlash(filepath.Clean(path))
}

// GitHub Actions workflow command levels by severity.
var githubLevel = map[critic.Severity]string{
	critic.Critical: "error",
	critic.Warning:  "warning",
	critic.Info:     "notice",
}

// writeGitHub prints one GitHub Actions workflow command per issue, which
// annotates the file at the task's line. Issues of standard input name
// no file.
func writeGitHub(w io.Writer, files []lintFile) {
	for _, f := range files {
		for _, is := range f.report.Issues {
			level, ok := githubLevel[is.Severity]
			if !ok {
				level = "notice"
			}
			var props []string
			if f.path != stdinPath {
				props = append(props, "file="+githubProperty(repoPath(f.path)))
				if line, col := position(is.Pos); line > 0 {
					props = append(props, fmt.Sprintf("line=%d", line))
					if col > 0 {
						props = append(props, fmt.Sprintf("col=%d", col))
					}
				}
			}
			props = append(props, "title="+githubProperty(is.Check))
			msg := where(is) + ": " + is.Message
			if is.Recommendation != "" {
				msg += "\n" + is.Recommendation
			}
			fmt.Fprintf(w, "::%s %s::%s\n", level, strings.Join(props, ","), githubData(msg))
		}
	}
}

var (
	githubDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// githubData escapes the message of a workflow command.
func githubData(s string) string { return githubDataEscaper.Replace(s) }

// githubProperty escapes a property value of a workflow command.
func githubProperty(s string) string { return githubPropertyEscaper.Replace(s) }
