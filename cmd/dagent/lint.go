package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/critic/report"
	"github.com/spf13/cobra"
)

// failNever is the --fail-on level that never fails.
const failNever = "never"

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
	fl.StringVarP(&f.format, "format", "f", string(report.Text), "output format: text, json, sarif or github")
	fl.StringVar(&f.registry, "registry", "", "registry file (YAML or JSON) of the workers tasks may name")
	fl.StringVar(&f.failOn, "fail-on", string(critic.Critical), "exit 1 when an issue of this severity or worse is found: critical, warning, info or never")
	return cmd
}

func lint(cmd *cobra.Command, args []string, f lintFlags) error {
	format, err := report.ParseFormat(f.format)
	if err != nil {
		return err
	}
	var failOn critic.Severity
	if f.failOn != failNever {
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
	files := make([]report.File, 0, len(paths))
	for _, path := range paths {
		data, err := read(cmd.InOrStdin(), path, "plan", maxPlanBytes)
		if err != nil {
			return err
		}
		files = append(files, report.File{Path: path, Report: critic.ReviewSource(data, opts...)})
	}

	// The working directory is the repository's root in CI.
	root, _ := os.Getwd()
	// The text report makes its text visible itself, around its colours,
	// which must reach a terminal as they are.
	out := cmd.OutOrStdout()
	colour := format == report.Text && useColor(unwrap(out))
	if colour {
		out = unwrap(out)
	}
	var buf bytes.Buffer
	err = report.Write(&buf, format, files, report.Options{
		Colour: colour,
		Root:   root,
		Tool:   report.Tool{Version: buildVersion()},
	})
	if err != nil {
		return err
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		return err
	}
	if failOn == "" {
		return nil
	}
	for _, file := range files {
		if file.Report.Has(failOn) {
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
		if p != report.Stdin {
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
		case arg == report.Stdin:
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

// unwrap is the writer under w, a [prose.Writer], or w.
func unwrap(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}
