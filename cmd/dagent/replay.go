package main

import (
	"cmp"
	"fmt"
	"io"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/spf13/cobra"
)

func newReplay() *cobra.Command {
	var (
		db      dbFlags
		format  string
		rerun   bool
		regPath string
	)
	cmd := &cobra.Command{
		Use:   "replay RUN",
		Short: "Run a journaled run again on its journal, without side effects, and compare",
		Long: `Run a journaled run again from the start, with its plan and options, and
compare the outcome with the journal's. The replay has no side effects:
every LLM request is answered from the exchanges the journal recorded (no
server, no key, no network), every worker and tool of the registry from the
results the journal committed, human reviews get the decisions they got, the
outputs the run started with (--initial-results) are given again, and the
replay is not journaled. What runs again is the orchestration: scheduling,
preconditions, predicates, failure policies, the planner's decisions and
the repairs of a run that replans.

The registry is the file the run started with, refused if it changed
since (the journal records its SHA-256); --registry FILE replays on the
file you name.

--rerun-workers runs the registry's workers and tools for real instead, as
the run did (a side effect happens again; the requests carry the run's
idempotency keys), and the output says how many calls ran.

The replay diverges when a request was not recorded (the prompts changed,
or an output did), when a worker is asked for a task the run never
finished, or when the run's status, a task's status or output, or a repair
plan differs from the journal's. For a run that did not finish (its process
died, or it was cancelled) only the tasks it finished are compared.

Exit codes: 0 the replay is identical, 1 it diverged (the differences are
listed), 2 usage or input error. --format json prints {"version" (1), "run_id",
"identical", "status", "recorded_status", "differences": [...],
"workers_rerun"}.`,
		Example: `  dagent replay 20250101T120000-1a2b3c4d
  dagent replay 20250101T120000-1a2b3c4d --rerun-workers --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replayRun(cmd, args[0], db, format, rerun, regPath)
		},
	}
	db.register(cmd, false)
	formatFlag(cmd, &format)
	cmd.Flags().BoolVar(&rerun, "rerun-workers", false, "run the registry's workers and tools for real instead of answering them from the journal")
	cmd.Flags().StringVar(&regPath, "registry", "", "registry `FILE` to replay on, instead of the one the run started with (which must not have changed since)")
	return cmd
}

type jsonReplay struct {
	Version        int      `json:"version"`
	RunID          string   `json:"run_id"`
	Identical      bool     `json:"identical"`
	Status         string   `json:"status"`
	RecordedStatus string   `json:"recorded_status"`
	Differences    []string `json:"differences"`
	WorkersRerun   int      `json:"workers_rerun"`
}

func replayRun(cmd *cobra.Command, id string, db dbFlags, format string, rerun bool, regPath string) error {
	s, err := openExisting(db)
	if err != nil {
		return err
	}
	defer closeStore(cmd, s)
	opts := []durable.Option{durable.WithCatalog(registryFile(cmd, regPath))}
	if rerun {
		opts = append(opts, durable.WithRerunWorkers())
	}
	rep, err := durable.Replay(cmd.Context(), s, id, opts...)
	if err != nil {
		return registryChanged(notFound(id, err), "replay")
	}
	doc := jsonReplay{Version: docVersion, RunID: rep.RunID, Identical: rep.Identical, Status: cmp.Or(string(rep.Status), "not run"),
		RecordedStatus: string(rep.RecordedStatus), Differences: append([]string{}, rep.Differences...), WorkersRerun: rep.WorkersRerun}
	out := cmd.OutOrStdout()
	if format == "json" {
		err = encodeJSON(out, doc)
	} else {
		writeReplay(out, rep, rerun)
	}
	if err != nil {
		return err
	}
	if !rep.Identical {
		return exitCode(exitInvalid)
	}
	return nil
}

func writeReplay(w io.Writer, rep *durable.Report, rerun bool) {
	rerunNote := ""
	if rerun {
		rerunNote = fmt.Sprintf(", %s re-executed", prose.Plural(rep.WorkersRerun, "worker or tool call"))
	}
	if rep.Identical {
		fmt.Fprintf(w, "replay of run %s: identical (%s, %s replayed%s)\n", rep.RunID, rep.Status, prose.Plural(rep.Exchanges, "LLM exchange"), rerunNote)
		return
	}
	fmt.Fprintf(w, "replay of run %s diverged (%s%s):\n", rep.RunID, prose.Plural(len(rep.Differences), "difference"), rerunNote)
	for _, d := range rep.Differences {
		fmt.Fprintf(w, "  - %s\n", d)
	}
}
