package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/runner"
	"github.com/spf13/cobra"
)

// signalled is the cause of a command's context that a signal cancelled.
// Like [signal.NotifyContext]'s cause, whose text it has, it is a
// [context.Canceled]: the journal holds the run as cancelled. It is a
// [climain.Signaller]: 130 for Ctrl-C (SIGINT), 143 for SIGTERM.
type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return s.sig.String() + " signal received" }

func (signalled) Is(target error) bool { return target == context.Canceled }

func (s signalled) ExitSignal() syscall.Signal { return s.sig }

// interruptible is the command's context, cancelled by Ctrl-C or SIGTERM
// with a [signalled] cause, which sets the command's exit code. After
// stop, a second signal has its default effect again.
func interruptible(cmd *cobra.Command) (ctx context.Context, stop context.CancelFunc) {
	return climain.Interruptible(cmd, func(sig syscall.Signal) error { return signalled{sig} })
}

// interrupted is err marked with the signal that cancelled ctx, if one
// did and err does not say so already: an error that reports a cancelled
// context (context.Canceled) has lost its cause, and with it the exit code.
func interrupted(ctx context.Context, err error) error {
	var s signalled
	if err == nil || errors.As(err, &s) || !errors.As(context.Cause(ctx), &s) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, s)
}

// signalExit is the exit code of a command that err says a signal
// interrupted.
func signalExit(err error) (exitCode, bool) { return climain.SignalExit(err) }

// runEnd is the exit of a run that ended with res: by its status, or that
// of the signal that interrupted it.
func runEnd(res *runner.Result) error {
	if code, ok := signalExit(res.Err); ok && res.Status == runner.StatusFailed {
		return code
	}
	return climain.RunExit(res.Status)
}

// resumeHint tells, on w, how to go on with a journaled run that did not
// complete: the dagent resume line of a run that failed or was
// interrupted, and in JSON, where the text summary does not say it, of a
// run that waits for review.
func resumeHint(w io.Writer, id string, res *runner.Result, format string) {
	switch {
	case res.Status == runner.StatusFailed:
		fmt.Fprintf(w, "dagent: to resume the run: dagent resume %s\n", id)
	case res.Status == runner.StatusWaiting && format == "json" && len(res.PendingReviews) > 0:
		fmt.Fprintf(w, "dagent: to resume the run: dagent resume %s --review %s=approve (or =reject)\n", id, res.PendingReviews[0].TaskID)
	}
}
