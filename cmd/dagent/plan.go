package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/capread"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/spf13/cobra"
)

type planFlags struct {
	registry string
	output   string
	format   string
	llm      llmFlags
}

func newPlan() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan MISSION",
		Short: "Ask an LLM for a plan of a mission",
		Long: `Ask an LLM for a plan of a mission, as dagent's meta-planner does: the model
chooses to plan, to answer directly or to ask a question; its plan is parsed,
validated and reviewed by the critic, and critical findings go back to the
model for a corrected plan (twice at most). Tasks may name the workers of
the registry (--registry); the plan's own agents may use its tools.

MISSION is the mission's text, or - for standard input. The plan's canonical
JSON goes to standard output, or to the file -o names; the critic's warnings
go to standard error. A direct answer or a question is printed on standard
output instead. --format json prints one JSON document: {"version" (1), "route", "plan",
"answer", "question", "reason" (the model's rationale, "" when it gave none), "report": {"score", "summary", "issues": [{"check",
"severity", "task_id", "field", "message", "recommendation"}]}, "attempts",
"usage": {"prompt_tokens", "completion_tokens"}}; the plan also goes to the
-o file when one is given.

The LLM is any OpenAI-compatible server: OPENAI_API_KEY for api.openai.com,
OPENAI_BASE_URL (e.g. http://localhost:8080/v1) for another, DAGENT_MODEL or
--model for the model. --record FILE appends every exchange to FILE;
--replay FILE answers from such a recording without a server or a key.

Exit codes: 0 a plan, 1 no valid plan after the corrections (the last
answer's findings on standard error) or an invalid registry, 2 usage, I/O or
LLM error (no LLM configured, the server failed), 5 the model answered the
mission directly (the answer is printed), 6 the model asks a clarifying
question (the question is printed).`,
		Example: `  dagent plan "Compare the prices of two shops for a product" > plan.json
  dagent plan --registry registry.yaml -o plan.json "Check the health of this repository"
  dagent plan --format json --record session.jsonl "Summarise the open issues"
  dagent plan --replay session.jsonl "Summarise the open issues"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return planCmd(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.registry, "registry", "", "registry file (YAML or JSON) of the workers and tools plans may use")
	fl.StringVarP(&f.output, "output", "o", "", "write the plan to `FILE` instead of standard output")
	formatFlag(cmd, &f.format)
	f.llm.register(cmd)
	return cmd
}

func planCmd(cmd *cobra.Command, mission string, f planFlags) (err error) {
	if err := f.llm.check(cmd); err != nil {
		return err
	}
	if mission, err = readMission(cmd, mission); err != nil {
		return err
	}
	reg, _, _, err := loadResolved(cmd, f.registry, "")
	if err != nil {
		return err
	}
	l := &lazyLLM{f: f.llm}
	defer func() { err = closeLLM(cmd, l, err) }()
	c, err := l.client("", true)
	if err != nil {
		return err
	}
	opts := append(f.llm.spec(cmd).PlannerOptions(), metaplanner.WithRegistry(reg))
	ctx, stop := interruptible(cmd)
	defer stop()
	res, err := metaplanner.New(c, opts...).Plan(ctx, mission)
	err = interrupted(ctx, err)
	if err := settlePlanning(cmd, res, briefHint(err, f.llm.brief), f.format); err != nil {
		return err
	}
	out, err := res.Plan.Canonical()
	if err != nil {
		return err
	}
	if f.output != "" {
		if err := os.WriteFile(f.output, out, 0o644); err != nil {
			return err
		}
	}
	if f.format == "json" {
		return encodeJSON(cmd.OutOrStdout(), metaplanner.Outcome{Result: res})
	}
	if f.output == "" {
		_, err = cmd.OutOrStdout().Write(out)
	}
	return err
}

// readMission returns the mission argument, read from stdin for "-".
func readMission(cmd *cobra.Command, arg string) (string, error) {
	mission := arg
	if arg == "-" {
		data, err := capread.Read(cmd.InOrStdin(), "-", "mission", maxPlanBytes)
		if err != nil {
			return "", err
		}
		mission = string(data)
	}
	if strings.TrimSpace(mission) == "" {
		return "", errors.New("the mission is empty")
	}
	return mission, nil
}

// settlePlanning reports an outcome of planning that is no plan to use and
// returns the error that sets the exit code: a direct answer (exit 5) or a
// question (exit 6) on stdout, the findings of the last answer when no
// plan was valid (exit 1) on stderr, and the planner's other errors as
// they are. In the JSON format those outcomes also print the planning
// document. For a plan it prints the critic's warnings on stderr and
// returns nil.
func settlePlanning(cmd *cobra.Command, res *metaplanner.Result, err error, format string) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var pe *metaplanner.PlanError
	switch {
	case errors.As(err, &pe):
		writeFindings(errOut, fmt.Sprintf("dagent: no valid plan after %s; the findings of the last answer:", prose.Plural(pe.Attempts, "attempt")), pe.Report, critic.Critical)
		if format == "json" {
			if err := encodeJSON(out, metaplanner.Outcome{Result: res, Err: err}); err != nil {
				return err
			}
		}
		return exitCode(exitInvalid)
	case err != nil:
		return err
	}
	var code exitCode
	switch res.Route {
	case metaplanner.RouteSynthesis:
		code = exitAnswered
	case metaplanner.RouteClarify:
		code = exitClarify
	default:
		if res.Plan == nil {
			return errors.New("the planner returned no plan")
		}
		writeFindings(errOut, "", res.Report, critic.Warning)
		return nil
	}
	if format == "json" {
		if err := encodeJSON(out, metaplanner.Outcome{Result: res}); err != nil {
			return err
		}
		return code
	}
	text := res.Answer
	if code == exitClarify {
		text = res.Question
	}
	if _, err := fmt.Fprintln(out, strings.TrimRight(text, "\n")); err != nil {
		return err
	}
	return code
}

// writeFindings prints header, if any, then the issues of rep of severity
// at least min, one per line with its recommendation below it.
func writeFindings(w io.Writer, header string, rep critic.Report, min critic.Severity) {
	if header != "" {
		fmt.Fprintln(w, header)
	}
	for _, is := range rep.Issues {
		if !is.Severity.AtLeast(min) {
			continue
		}
		fmt.Fprintln(w, prose.OneLine(is.String()))
		if is.Recommendation != "" {
			fmt.Fprintln(w, "  fix: "+prose.OneLine(is.Recommendation))
		}
	}
}
