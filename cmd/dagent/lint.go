package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/critic/lint"
	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/spf13/cobra"
)

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
		RunE: func(cmd *cobra.Command, args []string) error { return runLint(cmd, args, f) },
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

func runLint(cmd *cobra.Command, args []string, f lintFlags) error {
	format, err := report.ParseFormat(f.format)
	if err != nil {
		return err
	}
	paths, err := lint.Expand(args)
	if err != nil {
		return err
	}
	if f.maxCalls < 0 {
		return errors.New("--max-llm-calls must not be negative")
	}
	if !f.llmReview && (cmd.Flags().Changed("model") || cmd.Flags().Changed("max-llm-calls")) {
		return errors.New("--model and --max-llm-calls need --llm-review")
	}
	var review *lintReview
	if f.llmReview {
		review = &lintReview{llm: &lazyLLM{f: llmFlags{model: f.model}}, budget: llm.Budget{MaxCalls: f.maxCalls}}
		defer review.report(cmd)
	}
	l, err := newLinter(cmd, f, review)
	if err != nil {
		return err
	}
	if f.onlyPlans {
		paths = lint.OnlyPlans(paths)
	}
	// Every file is read before anything is printed, so that an I/O error
	// does not leave a partial report behind.
	results := make(lint.Results, 0, len(paths))
	for _, path := range paths {
		res, err := l.File(cmd.Context(), path)
		if err != nil {
			return err
		}
		name := path
		if path == report.Stdin {
			name = "<stdin>"
		}
		unchecked(cmd, name+": ", res.Unchecked)
		if res.Omitted > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d more issues not shown (--max-issues %d)\n", path, res.Omitted, res.MaxIssues)
		}
		results = append(results, res)
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
	err = report.Write(&buf, format, results.Files(), report.Options{
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
	if results.Fails() {
		return exitCode(exitInvalid)
	}
	return nil
}

// newLinter is the linter of the flags, with review when it is set: each
// flag the user set wins over the project configuration file's setting.
func newLinter(cmd *cobra.Command, f lintFlags, review *lintReview) (*lint.Linter, error) {
	opts := lint.Options{
		Settings:     lint.Settings{Enable: f.enable, Disable: f.disable},
		Registry:     cmp.Or(f.registry, os.Getenv(registryEnv)),
		LoadRegistry: func(path string) (*registry.Registry, error) { return loadRegistry(cmd, path) },
		Limits:       plan.Limits{MaxPlanBytes: int(maxPlanBytes)},
		Stdin:        cmd.InOrStdin(),
	}
	if cmd.Flags().Changed("fail-on") {
		gate, err := critic.ParseGate(f.failOn)
		if err != nil || f.failOn == "" {
			return nil, fmt.Errorf("unknown --fail-on level %q: use critical, warning, info or never", f.failOn)
		}
		opts.FailOn = gate
	}
	if f.maxIssues < 0 {
		return nil, errors.New("--max-issues must not be negative")
	}
	if cmd.Flags().Changed("max-issues") {
		opts.MaxIssues = &f.maxIssues
	}
	if review != nil {
		opts.Reviewer = review
	}
	l, err := lint.New(opts)
	if oe := (*lint.OptionError)(nil); errors.As(err, &oe) {
		return nil, fmt.Errorf("--%s: %w", oe.Setting, oe.Err)
	}
	return l, err
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

// Review asks the LLM for its findings on p.
func (r *lintReview) Review(ctx context.Context, p *plan.Plan, static critic.Report) ([]critic.Issue, error) {
	if r.meter == nil {
		c, err := r.llm.client("", true)
		if err != nil {
			return nil, fmt.Errorf("llm review: %w", err)
		}
		r.meter = llm.NewMeter(c, r.budget)
	}
	more, err := judge.NewReviewer(r.meter).Review(ctx, p, static)
	if err != nil {
		return nil, fmt.Errorf("llm review: %w", err)
	}
	return more, nil
}

// report says on stderr what the review spent.
func (r *lintReview) report(cmd *cobra.Command) {
	if r.meter == nil {
		return
	}
	u := r.meter.Usage()
	fmt.Fprintf(cmd.ErrOrStderr(), "llm review: %d calls, %d tokens (%d prompt, %d completion)\n", r.meter.Calls(), u.Total(), u.PromptTokens, u.CompletionTokens)
}
