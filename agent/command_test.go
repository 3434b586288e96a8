package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/internal/testproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Command tests run the test binary itself as the worker (package
// testproc).
func TestMain(m *testing.M) { testproc.Main(m) }

// helper returns a Command running the test binary as the named helper.
func helper(t *testing.T, name string, env ...string) *Command {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	// Under the race detector a program sleeps a second as it exits unless
	// told otherwise.
	return &Command{Argv: []string{exe, "-test.run=^$"}, Env: append([]string{testproc.Env + "=" + name, "GORACE=atexit_sleep_ms=0"}, env...)}
}

func TestCommandOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		helper string
		want   any
	}{
		{"json", map[string]any{
			"n":   json.Number("42"),
			"big": json.Number("12345678901234567890"),
			"f":   json.Number("1.5"),
			"s":   "x",
			"l":   []any{json.Number("1"), true, nil},
		}},
		{"text", "  hello\nworld"},
		{"trailing", `{"a": 1} {"b": 2}`},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.helper, func(t *testing.T) {
			t.Parallel()
			res, err := helper(t, tt.helper).Run(context.Background(), Request{TaskID: "t"})
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Output)
			assert.Zero(t, res.Usage)
		})
	}
}

func TestDecodeOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want any
	}{
		{"", ""},
		{" \n\t", ""},
		{"null", nil},
		{`"quoted"`, "quoted"},
		{"7\n", json.Number("7")},
		{"[1, 2]", []any{json.Number("1"), json.Number("2")}},
		{"{\"a\": 1}\n", map[string]any{"a": json.Number("1")}},
		{"{\"a\": 1", "{\"a\": 1"},
		{"1 2", "1 2"},
		{"ok\r\n", "ok"},
		{"  lead", "  lead"},
		{`"a\"b"`, `a"b`},
		{`"caf\u00e9" `, "café"},
		{"\"\xff\"", "\ufffd"},
		{`"a" "b"`, `"a" "b"`},
		{`"open`, `"open`},
		{`"`, `"`},
		{`""`, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, decodeOutput([]byte(tt.in)), "%q", tt.in)
	}
}

func TestLimitedBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		writes []int
	}{
		{"nothing", nil},
		{"small", []int{10}},
		{"one chunk exactly", []int{minChunk}},
		{"pipe-sized writes", []int{32 << 10, 32 << 10, 32 << 10, 5}},
		{"past the largest chunk", []int{3 * maxChunk, 1, maxChunk + 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &limitedBuffer{limit: 1 << 30, overflow: func() { t.Error("overflow") }}
			var want []byte
			for i, n := range tt.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				k, err := b.Write(p)
				require.NoError(t, err)
				require.Equal(t, n, k)
				want = append(want, p...)
			}
			got := b.Bytes()
			assert.Equal(t, want, got)
			assert.Equal(t, len(got), cap(got), "the output is held in a slice of its size")
		})
	}
}

func TestLimitedBufferOverflow(t *testing.T) {
	t.Parallel()
	overflows := 0
	b := &limitedBuffer{limit: 10, overflow: func() { overflows++ }}
	_, err := b.Write([]byte("0123456789"))
	require.NoError(t, err)
	for range 2 {
		n, err := b.Write([]byte("x"))
		assert.Zero(t, n)
		assert.ErrorIs(t, err, ErrOutputTooLarge)
	}
	assert.Equal(t, 1, overflows)
	assert.Equal(t, []byte("0123456789"), b.Bytes())
}

func TestCommandRequestOnStdin(t *testing.T) {
	t.Parallel()
	req := Request{
		RunID:          "run-1",
		TaskID:         "fetch",
		Agent:          "go-vet",
		Input:          "check \"this\" — ünïcode\n{{not a template}}",
		Attempt:        2,
		Diagnosis:      "too short",
		Depends:        map[string]any{"up": map[string]any{"items": []any{"a"}}},
		Skipped:        []string{"other"},
		Inputs:         map[string]any{"query": "q"},
		Params:         map[string]any{"packages": []any{"./..."}},
		IdempotencyKey: "run-1/fetch/2",
	}
	res, err := helper(t, "echo").Run(context.Background(), req)
	require.NoError(t, err)
	data, err := json.Marshal(res.Output)
	require.NoError(t, err)
	var got Request
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, req, got)
}

func TestCommandIgnoresStdin(t *testing.T) {
	t.Parallel()
	// A request far larger than a pipe's buffer, which the program never
	// reads: writing it fails with EPIPE once the program exits.
	req := Request{Input: strings.Repeat("x", 4<<20)}
	res, err := helper(t, "json").Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, json.Number("42"), res.Output.(map[string]any)["n"])
}

func TestCommandExitError(t *testing.T) {
	t.Parallel()
	c := helper(t, "fail")
	_, err := c.Run(context.Background(), Request{})
	var exit *ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.Code)
	assert.Empty(t, exit.Signal)
	assert.Equal(t, c.Argv, exit.Argv)
	assert.Equal(t, "first line\nboom\n", exit.Stderr)
	assert.Equal(t, fmt.Sprintf("command %q exited with status 3: first line\nboom", c.Argv[0]), err.Error())
}

func TestCommandStderrBounded(t *testing.T) {
	t.Parallel()
	_, err := helper(t, "bigstderr").Run(context.Background(), Request{})
	var exit *ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.Code)
	assert.Len(t, exit.Stderr, stderrTail)
	assert.True(t, strings.HasSuffix(exit.Stderr, "x\nthe end\n"), "tail: %q", exit.Stderr[len(exit.Stderr)-40:])
	assert.True(t, strings.HasSuffix(err.Error(), "x\nthe end"))
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		writes []string
		want   string
	}{
		{nil, ""},
		{[]string{"ab"}, "ab"},
		{[]string{"ab", "cd"}, "abcd"},
		{[]string{"abc", "def"}, "cdef"},
		{[]string{"abcdefgh"}, "efgh"},
		{[]string{"ab", "abcdefgh", "i"}, "fghi"},
		// The tail starts at a character boundary: "é" is two bytes.
		{[]string{"aé", "cde"}, "cde"},
	}
	for _, tt := range tests {
		b := &tailBuffer{max: 4}
		for _, w := range tt.writes {
			n, err := b.Write([]byte(w))
			require.NoError(t, err)
			require.Equal(t, len(w), n)
			require.LessOrEqual(t, len(b.buf), 4)
		}
		assert.Equal(t, tt.want, b.String(), "%q", tt.writes)
	}
}

func TestCommandTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := helper(t, "sleep").Run(ctx, Request{})
	assert.Less(t, time.Since(start), 2*time.Second)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "interrupted: context deadline exceeded")
}

func TestCommandCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("run halted")) })
	start := time.Now()
	_, err := helper(t, "sleep").Run(ctx, Request{})
	assert.Less(t, time.Since(start), 2*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "interrupted: context canceled: run halted")
}

func TestCommandAlreadyCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := helper(t, "json").Run(ctx, Request{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestCommandOutputCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size, limit int
		wantErr     bool
	}{
		{size: 1000, limit: 1000},
		{size: 1001, limit: 1000, wantErr: true},
		{size: 1 << 20, limit: 1000, wantErr: true},
		{size: 4 << 20, limit: 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-of-%d", tt.size, tt.limit), func(t *testing.T) {
			t.Parallel()
			c := helper(t, "bigout", "AGENT_TEST_SIZE="+strconv.Itoa(tt.size))
			c.MaxOutput = int64(tt.limit)
			res, err := c.Run(context.Background(), Request{})
			if !tt.wantErr {
				require.NoError(t, err)
				assert.Len(t, res.Output, tt.size)
				return
			}
			require.ErrorIs(t, err, ErrOutputTooLarge)
			assert.ErrorContains(t, err, "output too large: more than 1000 bytes on standard output")
		})
	}
}

func TestCommandStartErrors(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-program")
	tests := []struct {
		name string
		cmd  *Command
		want string
	}{
		{"no argv", &Command{}, "command has no program: set Argv to the program and its arguments"},
		{"empty program", &Command{Argv: []string{""}}, "command has no program"},
		{"not on PATH", &Command{Argv: []string{"dagent-no-such-program-xyz"}}, `command "dagent-no-such-program-xyz": cannot start: exec: "dagent-no-such-program-xyz": executable file not found in $PATH`},
		{"missing path", &Command{Argv: []string{missing}}, fmt.Sprintf("command %q: cannot start: ", missing)},
		{"missing dir", &Command{Argv: []string{os.Args[0]}, Dir: missing}, fmt.Sprintf("command %q: cannot start: ", os.Args[0])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.cmd.Run(context.Background(), Request{})
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestCommandEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := helper(t, "env", "AGENT_TEST_VALUE=first", "AGENT_TEST_VALUE=second")
	c.Dir = dir
	res, err := c.Run(context.Background(), Request{})
	require.NoError(t, err)
	out := res.Output.(map[string]any)
	assert.Equal(t, "second", out["value"], "a later entry wins")
	want, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	got, err := filepath.EvalSymlinks(out["dir"].(string))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// The environment test sets variables of the process, so it does not run in
// parallel with the others.
func TestCommandEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("LC_TIME", "C")
	tests := []struct {
		name      string
		pass, env []string
		want      []string
		absent    []string
	}{
		{name: "base only", want: []string{"PATH=" + os.Getenv("PATH"), "LC_TIME=C"}, absent: []string{"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"}},
		{name: "passed by name", pass: []string{"OPENAI_API_KEY"}, want: []string{"OPENAI_API_KEY=sk-secret"}, absent: []string{"AWS_SECRET_ACCESS_KEY"}},
		{name: "passed by prefix", pass: []string{"AWS_*"}, want: []string{"AWS_SECRET_ACCESS_KEY=aws-secret"}, absent: []string{"OPENAI_API_KEY"}},
		{name: "everything", pass: []string{"*"}, want: []string{"OPENAI_API_KEY=sk-secret", "AWS_SECRET_ACCESS_KEY=aws-secret"}},
		{name: "set wins", pass: []string{"OPENAI_API_KEY"}, env: []string{"OPENAI_API_KEY=other", "LC_TIME=fr_FR"}, want: []string{"OPENAI_API_KEY=other", "LC_TIME=fr_FR"}},
		{name: "set without passing", env: []string{"OPENAI_API_KEY=given"}, want: []string{"OPENAI_API_KEY=given"}, absent: []string{"AWS_SECRET_ACCESS_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := helper(t, "environ", tt.env...)
			c.PassEnv = tt.pass
			res, err := c.Run(context.Background(), Request{})
			require.NoError(t, err)
			got := map[string]string{}
			for _, kv := range res.Output.([]any) {
				k, v, _ := strings.Cut(kv.(string), "=")
				got[k] = v
			}
			for _, kv := range tt.want {
				k, v, _ := strings.Cut(kv, "=")
				assert.Equal(t, v, got[k], k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, got, k)
			}
		})
	}
}

func TestCommandPassEnvRefused(t *testing.T) {
	t.Parallel()
	for _, pass := range []string{"", "A=B", "A*B", "**"} {
		c := helper(t, "environ")
		c.PassEnv = []string{"HOME", pass}
		_, err := c.Run(context.Background(), Request{})
		assert.ErrorContains(t, err, fmt.Sprintf(`: PassEnv entry %q is not a variable name, a prefix ending in "*", or "*"`, pass))
	}
}

func TestExitErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *ExitError
		want string
	}{
		{&ExitError{Argv: []string{"prog", "a"}, Code: 3, Stderr: "  bad input\n"}, `command "prog" exited with status 3: bad input`},
		{&ExitError{Argv: []string{"prog"}, Code: 1}, `command "prog" exited with status 1`},
		{&ExitError{Argv: []string{"prog"}, Code: -1, Signal: "killed"}, `command "prog" was killed by signal "killed"`},
		{&ExitError{Code: 2}, `command "" exited with status 2`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
	}
}

func TestCommandCallTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, helper, args, want, wantErr string
	}{
		{name: "arguments on stdin", helper: "echo", args: `{"query": "dags <&>"}`, want: `{"query": "dags <&>"}`},
		{name: "empty arguments", helper: "echo", args: "", want: "{}"},
		{name: "text kept as written", helper: "text", args: "{}", want: "  hello\nworld \n\n"},
		{name: "non-zero exit", helper: "fail", args: "{}", wantErr: "exited with status 3: first line\nboom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := helper(t, tt.helper).CallTool(context.Background(), json.RawMessage(tt.args))
			if tt.wantErr != "" {
				var ee *ExitError
				require.ErrorAs(t, err, &ee)
				assert.Equal(t, 3, ee.Code)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCommandCallToolLimits(t *testing.T) {
	t.Parallel()
	t.Run("output too large", func(t *testing.T) {
		t.Parallel()
		c := helper(t, "bigout", "AGENT_TEST_SIZE=4096")
		c.MaxOutput = 1024
		_, err := c.CallTool(context.Background(), nil)
		require.ErrorIs(t, err, ErrOutputTooLarge)
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := helper(t, "sleep").CallTool(ctx, nil)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 10*time.Second)
	})
	t.Run("no program", func(t *testing.T) {
		t.Parallel()
		_, err := (&Command{}).CallTool(context.Background(), nil)
		assert.EqualError(t, err, "command has no program: set Argv to the program and its arguments")
	})
}

// A program that cannot be started, for a reason a retry cannot fix, is
// told apart from other failures: the runner does not retry it.
func TestCommandCannotStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-program")
	data := filepath.Join(dir, "data.txt")
	require.NoError(t, os.WriteFile(data, []byte("x"), 0o600))
	tests := []struct {
		name string
		cmd  *Command
	}{
		{"not on PATH", &Command{Argv: []string{"dagent-no-such-program-xyz"}}},
		{"missing path", &Command{Argv: []string{missing}}},
		{"not executable", &Command{Argv: []string{data}}},
		{"a directory", &Command{Argv: []string{dir}}},
		{"missing dir", &Command{Argv: []string{os.Args[0]}, Dir: missing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.cmd.Run(context.Background(), Request{})
			require.ErrorIs(t, err, ErrCannotStart)
			assert.ErrorContains(t, err, fmt.Sprintf("command %q: cannot start: ", tt.cmd.Argv[0]))
		})
	}
	_, err := helper(t, "fail").Run(context.Background(), Request{})
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrCannotStart, "a program that started and failed")
}
