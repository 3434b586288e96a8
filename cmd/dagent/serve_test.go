//go:build unix

package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
