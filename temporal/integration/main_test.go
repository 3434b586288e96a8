package integration_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/temporal/internal/devserver"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// env is what the suite's tests share: one dev server and one build of
// dagent-temporal, made by the first test that needs them.
var env struct {
	once   sync.Once
	err    error
	srv    *testsuite.DevServer
	out    bytes.Buffer // the server's output, shown when a test fails
	dir    string       // the build's directory, removed after the suite
	bin    string
	addr   string
	logger log.Logger
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if env.srv != nil {
		_ = env.srv.Stop()
	}
	if env.dir != "" {
		_ = os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

// setup skips the test under -short or without the temporal CLI, and
// otherwise starts the dev server and builds dagent-temporal, once.
func setup(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no Temporal dev server")
	}
	cli := devserver.CLI()
	if cli == "" {
		t.Skip(devserver.Missing)
	}
	env.once.Do(func() { env.err = start(cli) })
	if env.err != nil {
		t.Fatalf("%v\n%s", env.err, env.out.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dev server output:\n%s", env.out.String())
		}
	})
}

func start(cli string) error {
	var err error
	if env.dir, err = os.MkdirTemp("", "dagent-temporal-it-"); err != nil {
		return err
	}
	env.bin = filepath.Join(env.dir, "dagent-temporal")
	build := exec.Command("go", "build", "-o", env.bin, "../cmd/dagent-temporal")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building dagent-temporal: %v\n%s", err, out)
	}
	env.logger = log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.srv, err = devserver.Start(ctx, cli, env.logger, &env.out)
	if err != nil {
		return fmt.Errorf("starting the dev server (%s): %w", cli, err)
	}
	env.addr = env.srv.FrontendHostPort()
	return nil
}

// queue is a task queue of the test's own, so that no worker of another
// test takes its activities.
func queue(t *testing.T) string {
	return "it-" + regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-")
}

// A worker is a dagent-temporal worker process.
type worker struct {
	cmd *exec.Cmd
	out *syncBuffer
}

// startWorker starts a worker on q with the registry of testdata; vars
// are added to its environment. It is stopped with SIGTERM when the test
// ends, unless it was killed before.
func startWorker(t *testing.T, q string, vars ...string) *worker {
	t.Helper()
	w := &worker{out: &syncBuffer{}}
	w.cmd = exec.Command(env.bin, "worker", "--registry", "testdata/registry.yaml", "--task-queue", q,
		"--address", env.addr, "--heartbeat", "300ms", "--concurrency", "100")
	w.cmd.Env = append(os.Environ(), vars...)
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	require.NoError(t, w.cmd.Start())
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- w.cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = w.cmd.Process.Kill()
				<-done
				t.Errorf("worker %d did not stop within 20s of SIGTERM", w.cmd.Process.Pid)
			}
		}
		if t.Failed() {
			t.Logf("worker %d:\n%s", w.cmd.Process.Pid, w.out.String())
		}
	})
	return w
}

// kill kills the worker with SIGKILL and reaps it.
func (w *worker) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
	_ = w.cmd.Wait()
}

// syncBuffer is a buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// dagentTemporal runs the command with args, against the dev server when
// a command takes --address, and returns its exit code and outputs.
func dagentTemporal(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if len(args) > 0 && args[0] != "worker" {
		args = append(args, "--address", env.addr)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(env.bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errOut.String()
}

// result is a run's JSON result document, as dagent run prints it.
type result struct {
	RunID  string                `json:"run_id"`
	Status string                `json:"status"`
	Error  *string               `json:"error"`
	Tasks  map[string]taskResult `json:"tasks"`
	// Of a run that replans.
	ReplanCount *int `json:"replan_count"`
}

type taskResult struct {
	Status   string          `json:"status"`
	Attempts int             `json:"attempts"`
	Output   json.RawMessage `json:"output"`
	Error    *string         `json:"error"`
}

func decode(t *testing.T, doc string) result {
	t.Helper()
	var r result
	require.NoError(t, json.Unmarshal([]byte(doc), &r), doc)
	return r
}

// writePlan writes the plan p as JSON into the test's directory.
func writePlan(t *testing.T, p any) string {
	t.Helper()
	data, err := json.Marshal(p)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// execution is one execution of a task a worker recorded.
type execution struct {
	key string // the idempotency key: run/task/attempt
	pid int    // of the worker process
}

// executions reads the log the workers append to, in order.
func executions(t *testing.T, path string) []execution {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []execution
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e execution
		_, err := fmt.Sscanf(sc.Text(), "%s %d", &e.key, &e.pid)
		require.NoError(t, err, "log line %q", sc.Text())
		out = append(out, e)
	}
	require.NoError(t, sc.Err())
	return out
}

// waitFor polls cond every 100ms until it holds, failing the test after
// limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
