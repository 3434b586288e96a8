//go:build unix

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeRefusesAnOpenAddressWithoutToken(t *testing.T) {
	t.Setenv(envToken, "")
	for _, addr := range []string{"0.0.0.0:0", ":7700", "192.0.2.1:7700"} {
		db := filepath.Join(t.TempDir(), "runs.db")
		code, stdout, stderr := dagent(t, "", "serve", "--addr", addr, "--db", db)
		assert.Equal(t, exitUsage, code, addr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "other machines can reach it, and dagent serve has no token to ask them for: set $DAGENT_TOKEN or pass --token, or listen on 127.0.0.1", addr)
		assert.NoFileExists(t, db, "nothing is opened before the address is checked")
	}
	code, _, stderr := dagent(t, "", "serve", "--addr", "localhost", "--db", filepath.Join(t.TempDir(), "runs.db"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--addr: address localhost: missing port in address")
}

// dagent serve on every interface, with the token of $DAGENT_TOKEN: a
// request needs the token.
func TestServeWithToken(t *testing.T) {
	bin := binary(t)
	db := filepath.Join(t.TempDir(), "runs.db")
	cmd := exec.Command(bin, "run", "-", "--db", db, "--quiet")
	cmd.Stdin = strings.NewReader(`{"tasks": [{"id": "a", "type": "human_review", "input": "ok?"}]}`)
	out, _ := cmd.CombinedOutput()
	require.FileExists(t, db, string(out))

	t.Setenv(envToken, "s3cret")
	srv := startServe(t, bin, "--db", db, "--addr", "0.0.0.0:0")
	require.True(t, strings.HasPrefix(srv.url, "http://[::]:") || strings.HasPrefix(srv.url, "http://0.0.0.0:"), srv.url)
	assert.Contains(t, srv.String(), "open it once with ?token=TOKEN")
	assert.NotContains(t, srv.String(), "s3cret", "the token is not printed")
	port := strings.TrimSuffix(srv.url[strings.LastIndex(srv.url, ":")+1:], "/")
	base := "http://127.0.0.1:" + port

	resp, err := http.Get(base + "/runs")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	req, _ := http.NewRequest(http.MethodGet, base+"/runs", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	req.Host = "attacker.example:" + port
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "a name the server does not have")

	if name, err := os.Hostname(); err == nil {
		req.Host = name + ":" + port
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the machine's name, on every interface: %s", req.Host)
	}
}

// A journal that --db names must exist: a mistyped path is not served
// empty. The default journal is made if need be, and said to be new.
func TestServeNeedsTheJournalItIsGiven(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	typo := filepath.Join(dir, "typo.db")
	// serve refuses at once, or would serve until the deadline.
	serve := func(env string, args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
		cmd.Env = append(os.Environ(), envDB+"="+env)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := serve("", "--db", typo)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "dagent: no journal at "+typo+": runs are journaled there by dagent run (pass --db PATH or set DAGENT_DB for another database)\n", out)
	assert.NoFileExists(t, typo)
	code, out = serve(typo)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "no journal at "+typo)
	assert.NoFileExists(t, typo)

	t.Setenv(envDB, "")
	wd := t.TempDir()
	t.Chdir(wd)
	srv := startServe(t, bin)
	assert.Contains(t, srv.String(), "dagent: no journal at .dagent/dagent.db yet: a new one, empty; the runs dagent run journals there show up\n")
	assert.FileExists(t, filepath.Join(wd, ".dagent", "dagent.db"))
}

// promSamples parses a scrape of /metrics: each counter's value and each
// histogram's count, by name and the labels named in keep.
func promSamples(t *testing.T, body io.Reader, keep ...string) map[string]float64 {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	require.NoError(t, err)
	samples := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				if slices.Contains(keep, l.GetName()) {
					key += " " + l.GetName() + "=" + l.GetValue()
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				samples[key] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				samples[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return samples
}

// dagent serve serves the metrics of the runs journaled while it runs at
// /metrics, behind its token: a run of another process, and its resume by
// a decision made on the server's page, each counted once.
func TestServeMetrics(t *testing.T) {
	bin := binary(t)
	dir := writeFiles(t, map[string]string{"registry.yaml": shRegistry})
	db := filepath.Join(dir, "runs.db")
	// An empty journal, which the server serves as the run is journaled.
	s, err := openStore(db)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	t.Setenv(envToken, "s3cret")
	srv := startServe(t, bin, "--db", db)
	base := strings.TrimSuffix(srv.url, "/")

	cmd := exec.Command(bin, "run", "-", "--db", db, "--quiet", "--run-id", "r1", "--registry", filepath.Join(dir, "registry.yaml"))
	cmd.Stdin = strings.NewReader(`{"tasks": [{"id": "e", "agent": "echo", "input": "x"}, {"id": "a", "type": "human_review", "input": "ok?", "depends_on": ["e"]}]}`)
	out, _ := cmd.CombinedOutput()
	require.Equal(t, exitWaiting, cmd.ProcessState.ExitCode(), string(out))

	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the token guards the metrics")
	metrics := func() map[string]float64 {
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
		got := promSamples(t, resp.Body, "dagent_task_status", "dagent_run_status")
		for k := range got {
			if !strings.HasPrefix(k, "dagent_") {
				delete(got, k)
			}
		}
		return got
	}
	// A review that waits, and its run, are not at their end: they count
	// once decided.
	want := map[string]float64{
		"dagent_tasks_total dagent_task_status=done":           1,
		"dagent_task_duration_seconds dagent_task_status=done": 1,
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, want, metrics()) }, 20*time.Second, 100*time.Millisecond, "server: %s", srv)

	// Approve on the run's page: the server resumes the run, which
	// completes.
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	page := func(path string) string {
		resp, err := browser.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page("/runs/r1?token=s3cret"))
	require.NotNil(t, m, "the run page has the review's form")
	resp, err = browser.PostForm(base+"/runs/r1/reviews/a", url.Values{"csrf": {m[1]}, "decision": {"approve"}, "by": {"Ada"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	want["dagent_tasks_total dagent_task_status=done"] = 2
	want["dagent_task_duration_seconds dagent_task_status=done"] = 2
	want["dagent_runs_total dagent_run_status=completed"] = 1
	want["dagent_run_duration_seconds dagent_run_status=completed"] = 1
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, want, metrics()) }, 20*time.Second, 100*time.Millisecond, "server: %s", srv)
	assert.Contains(t, srv.String(), "dagent: run r1: completed")
	time.Sleep(3 * time.Second) // reads of the journal, to count nothing twice
	assert.Equal(t, want, metrics())
}
