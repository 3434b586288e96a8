package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/spf13/cobra"
)

// executeArgs is what dagent run --replan or --mission runs.
type executeArgs struct {
	plan     *plan.Plan // nil: plan the mission first
	mission  string
	reg      *registry.Registry
	llm      *lazyLLM
	runner   []runner.Option
	reviews  map[string]runner.Decision
	progress *progress // nil for the JSON format
	f        runFlags
	runID    string // the run's id, as the journal knows it
	quiet    bool   // print nothing (replay)
}

// execute plans the mission when there is no plan, then runs the plan
// through the executor, which repairs it with the meta-planner when a run
// asks for a new plan. It returns the execution's run result (nil when
// nothing ran) and the command's error, which carries the exit code.
func execute(ctx context.Context, cmd *cobra.Command, a executeArgs) (*runner.Result, error) {
	meter, err := a.llm.client(true)
	if err != nil {
		return nil, err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	p := a.plan
	if p == nil {
		res, err := planMission(ctx, a.llm, a.reg, a.mission)
		format := a.f.format
		if a.quiet {
			format = "quiet"
		}
		if err := settlePlanning(cmd, res, err, format); err != nil {
			return nil, err
		}
		p = res.Plan
		if a.progress != nil {
			if a.progress.announce != nil {
				a.progress.announce()
			}
			fmt.Fprintf(out, "planned %s in %s\n", prose.Plural(len(p.Tasks), "task"), prose.Plural(res.Attempts, "attempt"))
		}
	}
	opts := []executor.Option{executor.WithRunner(a.runner...)}
	if a.reg != nil {
		opts = append(opts, executor.WithRegistry(a.reg))
	}
	if a.progress != nil {
		opts = append(opts, executor.WithObserver(a.progress))
	}
	res, err := executor.Execute(ctx, p, a.mission, append(opts,
		executor.WithRunID(a.runID),
		executor.WithReviews(a.reviews),
		executor.WithReplanner(a.llm.f.planner(meter, a.reg)),
		executor.WithMaxReplans(a.f.maxReplans),
		executor.WithMaxReplansPerTask(a.f.maxReplansPerTask),
		executor.WithCooldown(a.f.cooldown),
		executor.WithBudget(executor.Budget{MaxTokens: a.f.maxTokens, MaxCalls: a.f.maxCalls, MaxDuration: a.f.deadline}, meter),
	)...)
	var refused *executor.RefusedError
	if errors.As(err, &refused) {
		rep := refused.Report
		writeFindings(errOut, fmt.Sprintf("dagent: the critic refused the plan (score %d/10, %s); nothing ran:", rep.Score, prose.Plural(rep.Count(critic.Critical), "critical issue")), rep, critic.Warning)
		return nil, exitCode(exitInvalid)
	}
	if res == nil || err != nil && res.ExecutionAttempts == 0 {
		// Nothing ran: the runner refused the plan.
		if errors.Is(err, plan.ErrInvalid) {
			fmt.Fprintln(errOut, err)
			return nil, exitCode(exitInvalid)
		}
		return nil, err
	}
	rr := &res.Result
	if a.quiet {
		return rr, runExit(res.Status)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(errOut, "dagent:", err)
	}
	if a.f.format == "json" {
		err = writeExecutionJSON(out, res, meter.Usage())
	} else {
		err = writeSummary(out, res.Plan, rr, summaryExtra{replans: res.ReplanCount, halt: res.Halt})
	}
	if err != nil {
		return rr, err
	}
	return rr, runExit(res.Status)
}

// writeExecutionJSON prints the --format json document of a run that
// replans: res with the usage of every LLM call of the command.
func writeExecutionJSON(w io.Writer, res *executor.Result, usage llm.Usage) error {
	doc := *res
	doc.Usage = usage
	return encodeJSON(w, doc)
}
