package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/telemetry"
	"github.com/dagent-dev/dagent/telemetry/prom"
	"github.com/dagent-dev/dagent/web"
	"github.com/spf13/cobra"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// envToken is the variable that gives dagent serve its token.
const envToken = "DAGENT_TOKEN"

// defaultAddr is where dagent serve listens unless told: loopback only.
const defaultAddr = "127.0.0.1:7700"

type serveFlags struct {
	db       dbFlags
	addr     string
	token    string
	hosts    []string
	model    string
	registry string
}

func newServe() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Show the journal's runs in a browser, live, and decide their reviews there",
		Long: `Serve a web view of the journal: the runs, newest first, by status; each
run's graph with every task in its state, its tasks' inputs, outputs,
attempts, diagnoses, durations and tokens, and its timeline; and a plan
checker that reviews a plan as dagent lint does and draws it. The pages
follow the journal live: a run that a dagent run in another process
journals shows up, and its tasks change state, as it goes.

A run waiting for review shows each review's prompt and the results it
reviews, with Approve and Reject (an optional comment, and an optional
output as JSON). A decision resumes the run in this process, as dagent
resume RUN --review ID=approve does: on the registry the run started on
(--registry FILE: on that file instead), with the LLM of --model or the
run's model. The journal records who decided — the name given in the
form, else the address the request came from — and when.

GET /metrics serves, in the Prometheus text format, the metrics of the
runs the journal gets while the server runs, whichever process runs
them: dagent_tasks_total, dagent_task_duration_seconds,
dagent_task_retries_total, dagent_task_tokens_total, dagent_runs_total,
dagent_run_duration_seconds and dagent_replans_total. A run under way
when the server starts counts from then on. The model calls are measured
where they are made, which the journal does not say: their metrics come
from the processes that make them (OTEL_EXPORTER_OTLP_ENDPOINT).

The journal is --db FILE or $DAGENT_DB, which must exist, else
.dagent/dagent.db under the working directory, made if need be. The
server listens on 127.0.0.1 unless told: --addr HOST:PORT (port 0
picks a free one; the address is printed on standard error). An address
beyond loopback needs a token, --token or $` + envToken + `, or the
server refuses to start; with a token, every request needs it — open the
printed address once with ?token=TOKEN, which the browser keeps in a
cookie, or send Authorization: Bearer TOKEN, as a Prometheus scrape of
/metrics does. Requests must name the server's host (--host NAME adds
one, such as a reverse proxy's). A decision is a POST from the server's
own page, with its CSRF token. Ctrl-C stops the server; a resume it
runs stops as cancelled, to be resumed.`,
		Example: `  dagent serve
  dagent serve --db /var/lib/dagent/runs.db --addr 127.0.0.1:0
  DAGENT_TOKEN=$(openssl rand -hex 16) dagent serve --addr 0.0.0.0:7700 --host dagent.internal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd, f)
		},
	}
	fl := cmd.Flags()
	f.db.register(cmd, false)
	fl.StringVar(&f.addr, "addr", defaultAddr, "address to listen on, `HOST:PORT`; beyond loopback it needs a token")
	fl.StringVar(&f.token, "token", "", "token every request must carry (default $"+envToken+")")
	fl.StringArrayVar(&f.hosts, "host", nil, "host `NAME` requests may be addressed to besides the listening host and localhost (repeatable)")
	fl.StringVar(&f.model, "model", "", "model for the LLM agents of the runs a decision resumes (default the model each run started with, else $DAGENT_MODEL)")
	fl.StringVar(&f.registry, "registry", "", "registry `FILE` the plan checker checks against, and decisions resume runs on instead of the one each run started with")
	return cmd
}

func serve(cmd *cobra.Command, f serveFlags) error {
	if f.token == "" {
		f.token = os.Getenv(envToken)
	}
	if err := web.CheckAddr(f.addr, f.token); errors.Is(err, web.ErrNoToken) {
		return fmt.Errorf("--addr %s: other machines can reach it, and dagent serve has no token to ask them for: set $%s or pass --token, or listen on 127.0.0.1", f.addr, envToken)
	} else if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	reg, err := loadRegistry(cmd, f.registry)
	if err != nil {
		return err
	}
	s, err := openToServe(cmd, f.db)
	if err != nil {
		return err
	}
	defer closeStore(cmd, s)
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	// The metrics of the runs every process journals, this one's resumes
	// included, come from the journal: their spans are the processes'
	// that run them.
	ex, err := prom.New()
	if err != nil {
		ln.Close()
		return err
	}
	defer ex.Shutdown(context.Background())
	obs, err := telemetry.New(telemetry.WithMeterProvider(ex.MeterProvider()), telemetry.WithTracerProvider(tracenoop.NewTracerProvider()))
	if err != nil {
		ln.Close()
		return err
	}
	o := web.Options{Store: s, Addr: ln.Addr().String(), Hosts: f.hosts, Token: f.token, Decide: decider(cmd, s, f), Metrics: ex, Observer: obs}
	if reg != nil {
		o.Catalog = reg
	}
	h, err := web.New(o)
	if err != nil {
		ln.Close()
		return err
	}
	ctx, stop := interruptible(cmd)
	defer stop()
	srv := httpServer(ctx, h)
	addr := "http://" + ln.Addr().String() + "/"
	if f.token != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "dagent: serving %s at %s (open it once with ?token=TOKEN; Ctrl-C stops)\n", s.Path(), addr)
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "dagent: serving %s at %s (Ctrl-C stops)\n", s.Path(), addr)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		h.Close()
		return err
	case <-ctx.Done():
	}
	// The live pages end, and the resumes stop as cancelled, before the
	// server waits for its connections.
	h.Close()
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent: stop serving:", err)
	}
	return interrupted(ctx, context.Cause(ctx))
}

// decider resumes a run with the decisions made on its page, as dagent
// resume --review does, and says so on stderr.
func decider(cmd *cobra.Command, s store.Store, f serveFlags) web.DecideFunc {
	return func(ctx context.Context, id string, decisions map[string]runner.Decision, by string) (err error) {
		w := cmd.ErrOrStderr()
		fmt.Fprintf(w, "dagent: run %s: resuming with the decision of %s\n", id, by)
		l := &lazyLLM{f: llmFlags{model: f.model}}
		defer func() { err = closeLLM(cmd, l, err) }()
		r, err := durable.Load(ctx, s, id)
		if err != nil {
			return err
		}
		if f.registry != "" && r.Spec.Catalog == "" {
			return fmt.Errorf("run %s started without a registry; --registry cannot give it one", r.ID)
		}
		// Its metrics are the journal's, which the server observes: only
		// an export over OTLP observes the run itself, as for dagent
		// resume.
		opts := append([]durable.Option{durable.WithLLM(l.client), durable.WithCatalog(runnableCatalog(cmd, registryFile(cmd, f.registry))),
			durable.WithReviews(decisions), durable.WithReviewer(by)}, otelOptions()...)
		out, err := r.Resume(ctx, s, opts...)
		if err != nil {
			var code climain.ExitCode
			if errors.As(err, &code) {
				// Reported on stderr already, where it is said in full.
				err = fmt.Errorf("the run's registry cannot run here (the server's standard error says why): %w", err)
			}
			if plan.Problems(err) != nil {
				err = fmt.Errorf("the plan of run %s is no longer valid: %w", r.ID, err)
			}
			err = owned(registryChanged(err, "resume"))
			fmt.Fprintf(w, "dagent: run %s: %v\n", id, err)
			return err
		}
		fmt.Fprintf(w, "dagent: run %s: %s\n", id, out.Status)
		return nil
	}
}
