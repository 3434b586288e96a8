// Command dagent-temporal runs dagent plans on a Temporal cluster: each run
// a workflow execution whose id is the run id, each task attempt an
// activity done by a worker process on the host's trusted registry.
//
// Usage:
//
//	dagent-temporal worker --registry F --task-queue Q --address H:P   do the runs' activities until SIGINT or SIGTERM
//	dagent-temporal start PLAN --task-queue Q --address H:P [--wait]   start a run of PLAN
//	dagent-temporal show RUN --address H:P                            a running run's tasks, or a closed run's result
//	dagent-temporal approve RUN TASK --address H:P                    approve a human_review task the run waits on
//	dagent-temporal reject RUN TASK --address H:P                     reject it
//	dagent-temporal cancel RUN --address H:P                          cancel a run
//
// The result of a run is printed as dagent run prints it (--format json:
// the same document) and the exit codes are dagent run's: 0 completed, 1
// failed (or the plan is invalid), 2 usage or input error, 3 waiting for
// review, 4 replan required, 128 plus the signal's number when a signal
// interrupted the command. See docs/temporal.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
)

// The exit codes, those of dagent run.
const (
	exitOK       = climain.OK
	exitFailed   = climain.Failed
	exitUsage    = climain.Usage
	exitWaiting  = climain.Waiting  // the run waits for human review
	exitReplan   = climain.Replan   // the run needs a new plan
	exitAnswered = climain.Answered // the planner answered the mission directly
	exitClarify  = climain.Clarify  // the planner asked a question about the mission
)

// exitCode is an error that has already been reported and only sets the
// process's exit code.
type exitCode = climain.ExitCode

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code. What the
// commands print goes through a [prose.Writer]: task outputs, errors and
// diagnoses are untrusted text and must not act on the terminal.
//
// A command asked for --format json that fails before it printed its
// document prints a JSON error document instead, as dagent does:
// {"version": 1, "error", "exit_code", "problems"}.
func run(args []string, stdout, stderr io.Writer) int {
	out, errOut := prose.NewWriter(stdout), prose.NewWriter(stderr)
	defer out.Flush()
	defer errOut.Flush()
	return program.Execute(func(w io.Writer) *cobra.Command { return newRoot(w, errOut) }, args, out, errOut)
}

// program is dagent-temporal to [climain]; its JSON error document says
// the command's error as it is.
var program = climain.Program{
	Name: "dagent-temporal",
	WriteErrorDoc: func(w io.Writer, err error, code int) error {
		return jsonv.EncodeIndent(w, climain.ErrorDoc{Version: 1, Error: err.Error(), ExitCode: code, Problems: plan.Problems(err)}, "  ")
	},
}

// exitOf is the exit code of a command that returned err, which it
// prints on stderr unless the command did.
func exitOf(err error, stderr io.Writer) int { return program.ExitOf(err, stderr) }

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dagent-temporal",
		Short: "Run dagent plans on a Temporal cluster",
		Long: `Run dagent plans on a Temporal cluster. A run is a workflow execution whose
id is the run id; each attempt of a task is an activity, done by a worker
process (dagent-temporal worker) on its trusted registry. Retries,
verification, gates, reviews and replanning follow the plan's policies as
dagent run applies them. See docs/temporal.md.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newWorker(), newStart(), newShow(), newApprove(), newReject(), newCancel())
	return root
}

// connFlags are the flags that reach the cluster.
type connFlags struct {
	address   string
	namespace string
}

func (f *connFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.address, "address", "127.0.0.1:7233", "`HOST:PORT` of the Temporal frontend")
	cmd.Flags().StringVar(&f.namespace, "namespace", "default", "Temporal namespace")
}

// dial connects to the cluster; the SDK's own log goes to stderr from
// warnings up.
func (f *connFlags) dial(cmd *cobra.Command) (client.Client, error) {
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: f.address, Namespace: f.namespace, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s: %w", f.address, err)
	}
	return c, nil
}

// formatFlag registers --format (-f), text or json, checked before the
// command runs.
func formatFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "format", "f", "text", "output format: text or json")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if *format != "text" && *format != "json" {
			return fmt.Errorf("unknown format %q; use text or json", *format)
		}
		return nil
	}
}

// signalled is the cause of a command's context that a signal cancelled,
// a [climain.Signaller].
type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return s.sig.String() + " signal received" }

func (signalled) Is(target error) bool { return target == context.Canceled }

func (s signalled) ExitSignal() syscall.Signal { return s.sig }

// interruptible is the command's context, cancelled by SIGINT or SIGTERM
// with a [signalled] cause.
func interruptible(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return climain.Interruptible(cmd, func(sig syscall.Signal) error { return signalled{sig} })
}

// cause is err, or the signal that cancelled ctx when one did.
func cause(ctx context.Context, err error) error {
	var s signalled
	if err != nil && errors.As(context.Cause(ctx), &s) {
		return s
	}
	return err
}
