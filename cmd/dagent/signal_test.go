package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSignalExit(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code exitCode
		ok   bool
	}{
		{"SIGINT", fmt.Errorf("run cancelled: %w", signalled{syscall.SIGINT}), 130, true},
		{"SIGTERM", fmt.Errorf("run cancelled: %w", signalled{syscall.SIGTERM}), 143, true},
		{"a cancellation of another cause", fmt.Errorf("run cancelled: %w", context.Canceled), 0, false},
		{"no error", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, ok := signalExit(tt.err)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.code, code)
		})
	}
	assert.ErrorIs(t, signalled{syscall.SIGINT}, context.Canceled, "the journal holds an interrupted run as cancelled")
	assert.Equal(t, "interrupt signal received", signalled{syscall.SIGINT}.Error())
	assert.False(t, errors.Is(signalled{syscall.SIGINT}, context.DeadlineExceeded))
}

// TestResumeHint: a journaled run that failed, or waits for review in
// JSON, says on stderr how to resume it; an unjournaled one cannot be
// resumed and does not.
func TestResumeHint(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"fail.json":     `{"tasks": [{"id": "a", "agent": "fail"}]}`,
		"review.json":   `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "ok", "type": "human_review", "depends_on": ["a"], "input": "Approve?"}]}`,
		"registry.yaml": shRegistry,
	})
	reg, db := filepath.Join(dir, "registry.yaml"), filepath.Join(dir, "runs.db")
	id := `\d{8}T\d{6}-[0-9a-f]{8}`
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"failed, text", []string{"fail.json"}, exitInvalid, `^dagent: to resume the run: dagent resume ` + id + `\n$`},
		{"failed, json", []string{"fail.json", "-f", "json"}, exitInvalid, `^dagent: to resume the run: dagent resume ` + id + `\n$`},
		{"failed, no journal", []string{"fail.json", "--no-journal"}, exitInvalid, `^$`},
		{"waiting, json", []string{"review.json", "-f", "json"}, exitWaiting, `^dagent: to resume the run: dagent resume ` + id + ` --review ok=approve \(or =reject\)\n$`},
		{"waiting, text: the summary says it", []string{"review.json"}, exitWaiting, `^$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// --quiet: the progress, on stderr too, is not what is tested.
			args := append([]string{"run", "--quiet", filepath.Join(dir, tt.args[0]), "--registry", reg, "--db", db}, tt.args[1:]...)
			code, _, stderr := dagent(t, "", args...)
			require.Equal(t, tt.code, code, stderr)
			assert.Regexp(t, regexp.MustCompile(tt.stderr), stderr)
		})
	}
}

func TestInterrupted(t *testing.T) {
	lost := fmt.Errorf("llm: %w", context.Canceled)
	bySignal, cancel := context.WithCancelCause(context.Background())
	cancel(signalled{syscall.SIGINT})
	byOther, cancelOther := context.WithCancel(context.Background())
	cancelOther()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
		code exitCode
	}{
		{"a signal's cause is put back", bySignal, lost, "llm: context canceled (interrupt signal received)", 130},
		{"an error that has it is kept", bySignal, fmt.Errorf("run cancelled: %w", signalled{syscall.SIGINT}), "run cancelled: interrupt signal received", 130},
		{"another cancellation is no signal", byOther, lost, "llm: context canceled", 0},
		{"no error", bySignal, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := interrupted(tt.ctx, tt.err)
			if tt.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.want)
			}
			code, _ := signalExit(err)
			assert.Equal(t, tt.code, code)
		})
	}
}
