package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

type resumeFlags struct {
	db       dbFlags
	format   string
	review   []string
	reviews  string
	model    string
	registry string
	force    bool
}

func newResume() *cobra.Command {
	var f resumeFlags
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a journaled run that crashed, was cancelled or waits for review",
		Long: `Continue a run of the journal from where it stopped: a run whose process
died (kill -9, a crash, a reboot), a run interrupted with Ctrl-C, a run
that failed, or a run that waits for human review.

The run goes on under its id, with the plan and the options it was started
with (registry, concurrency, schedule, timeout, model, budgets). The journal
records the registry file's SHA-256 when the run starts, and a registry that
changed since is refused: --registry FILE resumes on the file you name. Every task
the journal holds as done keeps its output and never runs again; every
other task runs: those that had not started, those that failed or were
skipped, and the task that was in flight when the process died — which may
so run twice (at least once). Its request carries the same idempotency key
as the first time ("<run id>/<task id>/<attempt>"), so that a worker can
tell a repeat from a new request.

A run waiting for review takes the decisions with --review ID=approve or
--review ID=reject (repeatable), or --reviews FILE (a JSON object of task id
to "approve", "reject" or {"approved": bool, "comment": "...", "output":
...}). A review without a decision waits again. A completed run is printed
as it is; nothing runs.

A run that replans (dagent run --replan or --mission) goes on from the last
repair plan it adopted, with its repair history and what is left of its
limits; one that died while its mission was being planned plans it again.
One process at a time runs a run: the process that runs it owns it, and
beats a heartbeat into the journal while it runs. A resume of a run whose
owner is alive — its process runs on this host, or its heartbeat on
another host is less than 30s old — is refused (exit 2) with the owner
named; a run whose owner died is taken over. --force takes the run over
even from an owner that looks alive: a process that hangs, or a process id
another program took. An owner still running stops at its next heartbeat.

The output and the exit codes are those of dagent run: 0 completed, 1
failed, 2 usage or input error (or the run has a live owner), 3 waiting
for review, 4 replan required, 130 or 143 interrupted by Ctrl-C or SIGTERM.`,
		Example: `  dagent resume 20250101T120000-1a2b3c4d
  dagent resume 20250101T120000-1a2b3c4d --review approve_draft=approve --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return resumeRun(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	f.db.register(cmd, false)
	formatFlag(cmd, &f.format)
	quietFlag(cmd)
	fl.StringArrayVar(&f.review, "review", nil, "decision of a review, `ID=approve` or ID=reject (repeatable)")
	fl.StringVar(&f.reviews, "reviews", "", "JSON file of review decisions by task id")
	fl.BoolVar(&f.force, "force", false, "take the run over from the process that owns it even when that process looks alive (one that hangs, or whose id another program took)")
	fl.StringVar(&f.model, "model", "", "model for the run's LLM agents (default the model the run started with, else $DAGENT_MODEL)")
	fl.StringVar(&f.registry, "registry", "", "registry `FILE` to resume on, instead of the one the run started with (which must not have changed since)")
	return cmd
}

func resumeRun(cmd *cobra.Command, id string, rf resumeFlags) (err error) {
	reviews, err := reviewFlags(cmd, rf.review, rf.reviews)
	if err != nil {
		return err
	}
	s, err := openToResume(rf.db)
	if err != nil {
		return err
	}
	defer closeStore(cmd, s)
	r, err := durable.Load(cmd.Context(), s, id)
	if err != nil {
		return notFound(id, err)
	}
	if rf.registry != "" && r.Spec.Catalog == "" {
		return fmt.Errorf("run %s started without a registry; --registry cannot give it one", r.ID)
	}
	if wd, err := os.Getwd(); err == nil && r.Spec.Dir != "" && wd != r.Spec.Dir && r.Status != durable.StatusCompleted {
		fmt.Fprintf(cmd.ErrOrStderr(), "dagent: note: run %s started in %s; its workers now run in %s\n", r.ID, r.Spec.Dir, wd)
	}
	l := &lazyLLM{f: llmFlags{model: rf.model}}
	defer func() { err = closeLLM(cmd, l, err) }()
	view := newRunView(cmd, rf.format, r.ID, true)
	ctx, stop := interruptible(cmd)
	defer stop()
	opts := append(view.options(), durable.WithLLM(l.client), durable.WithCatalog(runnableCatalog(cmd, registryFile(cmd, rf.registry))), durable.WithReviews(reviews))
	if rf.force {
		opts = append(opts, durable.WithTakeover())
	}
	out, err := r.Resume(ctx, s, opts...)
	err = interrupted(ctx, err)
	if errors.Is(err, store.ErrOwned) {
		return owned(err)
	}
	if plan.Problems(err) != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "dagent: the plan of run %s is no longer valid:\n", r.ID)
	}
	return view.print(out, registryChanged(err, "resume"))
}

// reviewFlags reads the decisions of --reviews FILE and --review ID=D
// (which win).
func reviewFlags(cmd *cobra.Command, flags []string, file string) (map[string]runner.Decision, error) {
	decisions := map[string]runner.Decision{}
	if file != "" {
		var err error
		if decisions, err = readReviews(cmd, file); err != nil {
			return nil, err
		}
	}
	for _, arg := range flags {
		id, v, ok := strings.Cut(arg, "=")
		if !ok || strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("--review %q: want ID=approve or ID=reject", arg)
		}
		d, err := runner.ParseDecision(v)
		if err != nil {
			return nil, fmt.Errorf("--review %s: %w", arg, err)
		}
		decisions[strings.TrimSpace(id)] = d
	}
	if len(decisions) == 0 {
		return nil, nil
	}
	return decisions, nil
}
