package climain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

type sig syscall.Signal

func (s sig) Error() string              { return "signal" }
func (s sig) ExitSignal() syscall.Signal { return syscall.Signal(s) }

var errPlain = errors.New("no LLM")

var prog = Program{
	Name:  "prog",
	Plain: []error{errPlain},
	WriteErrorDoc: func(w io.Writer, err error, code int) error {
		return jsonv.EncodeIndent(w, ErrorDoc{Version: 1, Error: err.Error(), ExitCode: code}, "")
	},
}

func TestExitOf(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"nil", nil, OK, ""},
		{"exit code", fmt.Errorf("x: %w", ExitCode(Waiting)), Waiting, ""},
		{"reported", Reported{Code: Failed, Msg: "said"}, Failed, ""},
		{"invalid plan", fmt.Errorf("x: %w", plan.ErrInvalid), Failed, ""},
		{"plain", fmt.Errorf("asking: %w", errPlain), Usage, "prog: no LLM\n"},
		{"signal", fmt.Errorf("cancelled: %w", sig(syscall.SIGTERM)), 143, "prog: cancelled: signal\n"},
		{"other", errors.New("boom"), Usage, "prog: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, tt.code, prog.ExitOf(tt.err, &stderr))
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}

func TestRunExit(t *testing.T) {
	assert.NoError(t, RunExit(runner.StatusCompleted))
	assert.Equal(t, ExitCode(Waiting), RunExit(runner.StatusWaiting))
	assert.Equal(t, ExitCode(Replan), RunExit(runner.StatusReplanRequired))
	assert.Equal(t, ExitCode(Failed), RunExit(runner.StatusFailed))
}

// TestExecute: the error document is printed only for --format json
// given, and only when the command printed nothing.
func TestExecute(t *testing.T) {
	newRoot := func(print string) func(io.Writer) *cobra.Command {
		return func(stdout io.Writer) *cobra.Command {
			root := &cobra.Command{Use: "prog", SilenceErrors: true, SilenceUsage: true}
			root.SetOut(stdout)
			c := &cobra.Command{Use: "c", RunE: func(cmd *cobra.Command, _ []string) error {
				fmt.Fprint(cmd.OutOrStdout(), print)
				return errors.New("boom")
			}}
			c.Flags().StringP("format", "f", "text", "")
			root.AddCommand(c)
			return root
		}
	}
	tests := []struct {
		name, print string
		args        []string
		stdout      string
	}{
		{"json", "", []string{"c", "-f", "json"}, `{"version":1,"error":"boom","exit_code":2}` + "\n"},
		{"json, printed", "doc", []string{"c", "-f", "json"}, "doc"},
		{"text", "", []string{"c", "-f", "text"}, ""},
		{"default", "", []string{"c"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, Usage, prog.Execute(newRoot(tt.print), tt.args, &stdout, &stderr))
			assert.Equal(t, tt.stdout, stdout.String())
			assert.Equal(t, "prog: boom\n", stderr.String())
		})
	}
}
