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
	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

// failNever is the --fail-on level that never fails.
const failNever = "never"

type lintFlags struct {
	format    string
	registry  string
	failOn    string
	enable    []string
	disable   []string
	maxIssues int
	onlyPlans bool

	// LLM review.
	llmReview bool
	model     string
	maxCalls  int
	review    *lintReview // set by lint when llmReview is
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
a directory (its *.json plans), DIR/... or ./... (the *.json plans under it,
skipping testdata, vendor, node_modules and directories starting with . or
_), or - for standard input; give as many as you like. In a directory, valid
JSON that has no task list at its top (no "tasks", "steps", "workflow",
"phases" or "plan" key) is not a plan and is skipped. A text named as a plan
that is not one is not an error: it is reported as a critical issue of that
file.

Each plan's registry is --registry, else $DAGENT_REGISTRY, else registry: in
the .dagent.yaml found in the plan's directory or above, else registry.yaml
beside the plan; with none, the agents the plan does not define are taken as
host workers, with a note on standard error. The same .dagent.yaml tunes
lint (lint: enable, disable, fail-on, max-issues, exclude); flags override
it. See docs/lint.md.

Formats: text (grouped by file and task, for people), json ({"files": [{"path",
"score", "summary", "issues": [{"check", "severity", "task_id", "field",
"message", "recommendation", "line", "column"}], "recommendations"}]}), sarif
(SARIF 2.1.0, for GitHub code scanning and other SARIF viewers) and github
(workflow commands that annotate the files in a GitHub Actions run). Line and
column are 0 when unknown.

Exit codes: 0 no issue at or above --fail-on in any file, 1 some file has one
(or the registry is invalid), 2 usage or I/O error (a file that cannot be
read, a glob that matches nothing, a bad flag). --fail-on never always exits
0 once every file was read.

--llm-review also asks an LLM to read each plan for what static checks
cannot see (a task that does not serve the mission, a missing step, a
predicate that checks the wrong thing); its findings, warnings or infos
with the check llm_review, join the report. The LLM is configured as for
dagent run (OPENAI_API_KEY or OPENAI_BASE_URL, DAGENT_MODEL or --model);
--max-llm-calls bounds its calls. What it spent goes to standard error. A
review the LLM cannot give is an error (exit 2), with no report.`,
		Example: `  dagent lint plan.json
  dagent lint ./...
  dagent lint --disable optimism_bias,parallel_explosion --max-issues 20 plans/
  dagent lint --fail-on warning 'plans/*.json' 'plans/*/*.json'
  dagent lint --registry registry.yaml --format sarif plans/*.json > dagent.sarif
  llm-tool "write a plan" | dagent lint -
  # in a GitHub Actions step: annotations on the pull request's files
  dagent lint --format github --fail-on warning plans/*.json
  dagent lint --llm-review --model gpt-4o-mini plan.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return lint(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.format, "format", "f", string(report.Text), "output format: text, json, sarif or github")
	fl.StringVar(&f.registry, "registry", "", "registry file (YAML or JSON) of the workers tasks may name")
	fl.StringVar(&f.failOn, "fail-on", string(critic.Critical), "exit 1 when an issue of this severity or worse is found: critical, warning, info or never")
	fl.StringSliceVar(&f.enable, "enable", nil, "report `CHECK` even if the configuration file disables it (repeatable, or comma-separated)")
	fl.StringSliceVar(&f.disable, "disable", nil, "do not report `CHECK` (repeatable, or comma-separated; all: every check that may be disabled)")
	fl.BoolVar(&f.onlyPlans, "only-plans", false, "skip the named *.json files that are not plans, as a directory argument does (for hooks handed every changed JSON file)")
	fl.IntVar(&f.maxIssues, "max-issues", 0, "print at most `N` issues per file, the worst first (0: all); the exit status counts every issue")
	fl.BoolVar(&f.llmReview, "llm-review", false, "also ask an LLM to review each plan; its findings have the check llm_review")
	fl.StringVar(&f.model, "model", "", "model of --llm-review (default $"+openai.EnvModel+")")
	fl.IntVar(&f.maxCalls, "max-llm-calls", 0, "most LLM calls of --llm-review; 0 is no limit")
	return cmd
}

func lint(cmd *cobra.Command, args []string, f lintFlags) error {
	format, err := report.ParseFormat(f.format)
	if err != nil {
		return err
	}
	paths, err := lintPaths(args)
	if err != nil {
		return err
	}
	if f.maxCalls < 0 {
		return errors.New("--max-llm-calls must not be negative")
	}
	if !f.llmReview && (cmd.Flags().Changed("model") || cmd.Flags().Changed("max-llm-calls")) {
		return errors.New("--model and --max-llm-calls need --llm-review")
	}
	if f.llmReview {
		f.review = &lintReview{llm: &lazyLLM{f: llmFlags{model: f.model}}, budget: llm.Budget{MaxCalls: f.maxCalls}}
		defer f.review.report(cmd)
	}
	if f.onlyPlans {
		paths = slices.DeleteFunc(paths, func(p string) bool {
			return p != report.Stdin && filepath.Ext(p) == ".json" && !isPlanFile(p)
		})
	}
	// Every file is read before anything is printed, so that an I/O error
	// does not leave a partial report behind.
	files := make([]report.File, 0, len(paths))
	failed := false
	for _, path := range paths {
		file, fails, err := lintFile(cmd, path, f)
		if err != nil {
			return err
		}
		files = append(files, file)
		failed = failed || fails
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
	if failed {
		return exitCode(exitInvalid)
	}
	return nil
}

// lintFile reviews the plan at path with its registry and its project
// configuration file under the flags, and returns the report and whether
// it fails the --fail-on level. Issues past --max-issues are left out of
// the report with a line on stderr, and still count for the exit status.
func lintFile(cmd *cobra.Command, path string, f lintFlags) (report.File, bool, error) {
	file := report.File{Path: path}
	cfg, err := findConfig(planDir(path))
	if err != nil {
		return file, false, err
	}
	set, err := settingsFor(cmd.Flags(), f, cfg)
	if err != nil {
		return file, false, err
	}
	var failOn critic.Severity
	if set.failOn != failNever {
		if failOn, err = critic.ParseSeverity(set.failOn); err != nil {
			return file, false, fmt.Errorf("unknown --fail-on level %q: use critical, warning, info or never", set.failOn)
		}
	}
	reg, _, src, err := loadResolved(cmd, f.registry, path)
	if err != nil {
		return file, false, err
	}
	data, err := read(cmd.InOrStdin(), path, "plan", maxPlanBytes)
	if err != nil {
		return file, false, err
	}
	var opts []critic.Option
	if src.path != "" {
		opts = append(opts, critic.WithCatalog(reg))
	} else if p, _ := plan.Parse(data); p != nil {
		agents := undefinedAgents(p)
		opts = append(opts, critic.WithWorkers(agents...))
		name := path
		if path == report.Stdin {
			name = "<stdin>"
		}
		unchecked(cmd, name+": ", agents)
	}
	file.Report = critic.ReviewSource(data, opts...)
	if f.review != nil {
		if file.Report, err = f.review.add(cmd, file.Report, data); err != nil {
			return file, false, fmt.Errorf("%s: llm review: %w", path, err)
		}
	}
	file.Report = file.Report.Without(func(is critic.Issue) bool { return set.silenced(path, is) })
	failed := failOn != "" && file.Report.Has(failOn)
	if left := capIssues(&file.Report, set.maxIssues); left > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d more issues not shown (--max-issues %d)\n", path, left, set.maxIssues)
	}
	return file, failed, nil
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
		case arg == "..." || strings.HasSuffix(arg, "/..."):
			if err := addDir(strings.TrimSuffix(strings.TrimSuffix(arg, "..."), "/"), true, arg, add); err != nil {
				return nil, err
			}
		case isDir(arg):
			if err := addDir(arg, false, arg, add); err != nil {
				return nil, err
			}
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

// addDir adds the plans of dir ("" for the working directory), with
// recursive those of its subdirectories too; arg, as given, names it in
// errors. A directory without a plan is a usage error, as a glob that
// matches nothing is.
func addDir(dir string, recursive bool, arg string, add func(string)) error {
	if dir == "" {
		dir = "."
	}
	if !isDir(dir) {
		return fmt.Errorf("lint: %s is not a directory", dir)
	}
	found, err := planFiles(dir, recursive)
	if err != nil {
		return fmt.Errorf("lint: %w", err)
	}
	if len(found) == 0 {
		return fmt.Errorf("lint: no plan under %q", arg)
	}
	for _, p := range found {
		add(p)
	}
	return nil
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
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

// lintReview is the LLM review of lint --llm-review: one meter for every
// file, asked for the first time a plan has tasks to review.
type lintReview struct {
	llm    *lazyLLM
	budget llm.Budget
	meter  *llm.Meter
}

// add merges the LLM's findings on the plan of data into rep. A text
// without a plan's tasks is not sent.
func (r *lintReview) add(cmd *cobra.Command, rep critic.Report, data []byte) (critic.Report, error) {
	p, _ := plan.Parse(data)
	if p == nil || len(p.Tasks) == 0 {
		return rep, nil
	}
	if r.meter == nil {
		c, err := r.llm.client("", true)
		if err != nil {
			return rep, err
		}
		r.meter = llm.NewMeter(c, r.budget)
	}
	more, err := judge.NewReviewer(r.meter).Review(cmd.Context(), p, rep)
	if err != nil {
		return rep, err
	}
	return critic.Merge(rep, p, more), nil
}

// report says on stderr what the review spent.
func (r *lintReview) report(cmd *cobra.Command) {
	if r.meter == nil {
		return
	}
	u := r.meter.Usage()
	fmt.Fprintf(cmd.ErrOrStderr(), "llm review: %d calls, %d tokens (%d prompt, %d completion)\n", r.meter.Calls(), u.Total(), u.PromptTokens, u.CompletionTokens)
}
