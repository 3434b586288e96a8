package climain

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Signaller is an error that says a signal interrupted the command, the
// one ExitSignal names.
type Signaller interface {
	error
	ExitSignal() syscall.Signal
}

// SignalExit is the exit code of a command that err says a signal
// interrupted: [SignalBase] plus the number of the signal of the first
// [Signaller] in err's chain (130 for Ctrl-C, 143 for SIGTERM, as shells
// report a process a signal killed), and false when there is none.
func SignalExit(err error) (ExitCode, bool) {
	var s Signaller
	if !errors.As(err, &s) {
		return 0, false
	}
	return ExitCode(SignalBase + int(s.ExitSignal())), true
}

// Interruptible is cmd's context, cancelled by SIGINT or SIGTERM with the
// cause that cause makes of the signal. After stop, which cancels ctx
// with [context.Canceled] if no signal did, a second signal has its
// default effect again.
func Interruptible(cmd *cobra.Command, cause func(syscall.Signal) error) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(cmd.Context())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(cause(sig))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}
