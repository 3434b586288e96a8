// Package climain is the plumbing that the main packages of dagent's
// commands (cmd/dagent, temporal/cmd/dagent-temporal) share: their exit
// codes, how an error becomes one, and the JSON error document that a
// command asked for --format json prints when it fails before it has
// printed its own document.
//
// What differs between the commands (the program's name, errors said
// plainly, the text of the error document) is given by each in a
// [Program]; each has its own error type for a signal that interrupted a
// command, a [Signaller].
package climain

import (
	"errors"
	"fmt"
	"io"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/spf13/cobra"
)

// The exit codes of the commands.
const (
	OK         = 0   // success
	Failed     = 1   // the plan is invalid, or the run or the check failed
	Usage      = 2   // usage, input or I/O error
	Waiting    = 3   // the run waits for human review
	Replan     = 4   // the run needs a new plan
	Answered   = 5   // the planner answered the mission directly
	Clarify    = 6   // the planner asks the user a question
	SignalBase = 128 // plus a signal's number: a signal interrupted the command
)

// ExitCode is an error that has already been reported and only sets the
// process's exit code, its value.
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// RunExit is the exit of a run that ended with status s: nil when it
// completed, [Waiting] or [Replan], else [Failed].
func RunExit(s runner.Status) error {
	switch s {
	case runner.StatusCompleted:
		return nil
	case runner.StatusWaiting:
		return ExitCode(Waiting)
	case runner.StatusReplanRequired:
		return ExitCode(Replan)
	}
	return ExitCode(Failed)
}

// Reported is an error a command has already printed on standard error:
// Code is the command's exit code, and Msg what the JSON error document
// says. It unwraps to Code.
type Reported struct {
	Code ExitCode
	Msg  string
}

func (r Reported) Error() string { return r.Msg }

func (r Reported) Unwrap() error { return r.Code }

// ErrorDoc is what a command asked for --format json prints on standard
// output when it fails before it has printed its document: the same error
// is on standard error, as text.
type ErrorDoc struct {
	Version  int             `json:"version"`
	Error    string          `json:"error"`
	ExitCode int             `json:"exit_code"`
	Problems []*plan.Problem `json:"problems,omitempty"`
}

// Program is what a command-line program tells of itself to [Program.ExitOf]
// and [Program.Execute].
type Program struct {
	// Name is the program's name, which prefixes the errors it prints on
	// standard error: "dagent: ...".
	Name string
	// Plain are errors said as they are, without what wraps them, when a
	// command's error is one of them; they exit [Usage].
	Plain []error
	// WriteErrorDoc prints on w the JSON error document of err, which
	// ended the command with code.
	WriteErrorDoc func(w io.Writer, err error, code int) error
}

// ExitOf is the exit code of a command that returned err, which it prints
// on stderr unless the command did: [OK] for nil; the code of an
// [ExitCode] in err's chain (a [Reported] included), unprinted; [Failed],
// unprinted, for [plan.ErrInvalid], whose problems are on stderr already;
// else err is printed, and the code is that of the signal that
// interrupted the command ([SignalExit]), or [Usage].
func (p Program) ExitOf(err error, stderr io.Writer) int {
	var code ExitCode
	switch {
	case err == nil:
		return OK
	case errors.As(err, &code):
		return int(code)
	case errors.Is(err, plan.ErrInvalid):
		return Failed
	}
	for _, plain := range p.Plain {
		if errors.Is(err, plain) {
			fmt.Fprintln(stderr, p.Name+":", plain)
			return Usage
		}
	}
	fmt.Fprintln(stderr, p.Name+":", err)
	if code, ok := SignalExit(err); ok {
		return int(code)
	}
	return Usage
}

// Execute runs the command line args on the root command that newRoot
// makes to print on stdout, and returns the exit code, [Program.ExitOf]
// the command's error. A command run with --format json given that
// fails before it printed anything on stdout prints its JSON error
// document there, by WriteErrorDoc; an error writing it is printed on
// stderr.
func (p Program) Execute(newRoot func(stdout io.Writer) *cobra.Command, args []string, stdout, stderr io.Writer) int {
	out := &countingWriter{w: stdout}
	root := newRoot(out)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	code := p.ExitOf(err, stderr)
	if code != OK && out.n == 0 && jsonAsked(cmd) {
		if werr := p.WriteErrorDoc(out, err, code); werr != nil {
			fmt.Fprintln(stderr, p.Name+":", werr)
		}
	}
	return code
}

// countingWriter counts what goes through it: whether a command printed
// its document.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// jsonAsked reports whether cmd was run with --format json given.
func jsonAsked(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("format")
	return f != nil && f.Changed && f.Value.String() == "json"
}
