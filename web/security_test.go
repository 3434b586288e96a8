package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/web"
)

// The payloads an attacker would put in what the journal holds: a model's
// output, a plan's input, a task id, a run id, a diagnosis.
const (
	scriptTag = `<script>alert(1)</script>`
	imgTag    = `<img src=x onerror=alert(2)>`
	attrBreak = `"><svg onload=alert(3)>`
)

// hostile journals, without the runner (a journal is data anyone with the
// file can write), a run whose id, plan, outputs, errors and events carry
// the payloads.
func hostile(t *testing.T, s store.Store) (runID, taskID string) {
	t.Helper()
	ctx := context.Background()
	runID = `r` + attrBreak + scriptTag
	taskID = `t` + attrBreak + imgTag
	planDoc := map[string]any{
		"mission": "mission " + scriptTag,
		"tasks": []any{
			map[string]any{"id": taskID, "agent": "echo", "input": "input " + imgTag},
			map[string]any{"id": "review", "type": "human_review", "input": "prompt " + scriptTag + " {{results." + taskID + "}}", "depends_on": []string{taskID}},
		},
	}
	planJSON, err := json.Marshal(planDoc)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: runID, Plan: planJSON, Mission: "mission " + scriptTag}))
	out, err := json.Marshal("output " + scriptTag + imgTag + attrBreak)
	require.NoError(t, err)
	require.NoError(t, s.CommitTask(ctx, runID, store.Task{ID: taskID, Status: "done", Attempts: 2, Output: out, Diagnosis: "diagnosis " + imgTag, Started: time.Now()}))
	require.NoError(t, s.CommitTask(ctx, runID, store.Task{ID: "review", Status: "waiting"}))
	data, err := json.Marshal(store.EventData{Error: "error " + scriptTag, Attempt: 2})
	require.NoError(t, err)
	require.NoError(t, s.AppendEvents(ctx, runID, []store.Event{
		{Kind: "run_started", Time: time.Now()},
		{Kind: "task_failed", TaskID: taskID, Time: time.Now(), Data: data},
		{Kind: "task_retried", TaskID: taskID, Time: time.Now(), Data: data},
	}))
	require.NoError(t, s.SetStatus(ctx, runID, "waiting", "error "+scriptTag))
	return runID, taskID
}

// assertInert checks that none of the payloads is markup in page: each
// shows as text, and the page's one script is the server's.
func assertInert(t *testing.T, page string, shows ...string) {
	t.Helper()
	for _, raw := range []string{scriptTag, imgTag, attrBreak, "<svg onload"} {
		assert.NotContains(t, page, raw)
	}
	assert.Equal(t, 1, strings.Count(page, "<script"), "the page's only script is app.js")
	assert.Contains(t, page, `<script src="/static/app.js" defer></script>`)
	for _, s := range shows {
		assert.Contains(t, page, s)
	}
}

func TestUntrustedTextIsEscaped(t *testing.T) {
	s := journal(t)
	runID, taskID := hostile(t, s)
	srv, _ := serve(t, web.Options{Store: s, Decide: decider(s)})
	c := browser(t)
	escapedScript := "&lt;script&gt;alert(1)&lt;/script&gt;"
	escapedImg := "&lt;img src=x onerror=alert(2)&gt;"

	resp, page := get(t, c, srv.URL+"/runs")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assertInert(t, page, escapedScript, "/runs/"+url.PathEscape(runID))

	runURL := srv.URL + "/runs/" + url.PathEscape(runID)
	resp, page = get(t, c, runURL)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	assertInert(t, page, "mission "+escapedScript, "prompt "+escapedScript, "output "+escapedScript+escapedImg, "diagnosis "+escapedImg, "error "+escapedScript)

	resp, page = get(t, c, runURL+"/tasks/"+url.PathEscape(taskID))
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	assertInert(t, page, "input "+escapedImg, "output "+escapedScript)

	resp, page = get(t, c, srv.URL+"/runs/"+url.PathEscape(scriptTag))
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	assertInert(t, page, escapedScript)

	// The plan checker shows the plan's text and its findings.
	resp, page = get(t, c, srv.URL+"/check")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	form := url.Values{"csrf": {csrf(t, page)}, "plan": {`{"tasks": [{"id": "` + strings.ReplaceAll(attrBreak+imgTag, `"`, `\"`) + `", "agent": "` + scriptTag + `", "input": "x"}]}`}}
	resp, err := c.PostForm(srv.URL+"/check", form)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assertInert(t, string(body), escapedScript, escapedImg, `class="node`)
}

func TestSecurityHeaders(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	srv, _ := serve(t, web.Options{Store: s, Token: "s3cret"})
	c := browser(t)
	for _, path := range []string{"/runs", "/static/app.js", "/runs/nope", "/runs/r1?token=s3cret", "/runs/r1?token=wrong"} {
		resp, _ := get(t, c, srv.URL+path)
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
			assert.Contains(t, csp, directive, path)
		}
		assert.NotContains(t, csp, "unsafe-inline", path)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"), path)
	}
}

func TestNonLoopbackNeedsToken(t *testing.T) {
	s := journal(t)
	for _, addr := range []string{"0.0.0.0:7700", "[::]:7700", ":7700", "192.0.2.10:80", "dagent.example:7700"} {
		_, err := web.New(web.Options{Store: s, Addr: addr})
		require.ErrorIs(t, err, web.ErrNoToken, addr)
		require.ErrorIs(t, web.CheckAddr(addr, ""), web.ErrNoToken, addr)
		_, err = web.New(web.Options{Store: s, Addr: addr, Token: "t"})
		require.NoError(t, err, addr)
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:7700", "localhost:7700", "127.1.2.3:80"} {
		_, err := web.New(web.Options{Store: s, Addr: addr})
		require.NoError(t, err, addr)
	}
	_, err := web.New(web.Options{Addr: "127.0.0.1:0"})
	require.ErrorIs(t, err, web.ErrNoStore)
}

func TestToken(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	srv, _ := serve(t, web.Options{Store: s, Token: "s3cret"})

	t.Run("none", func(t *testing.T) {
		resp, body := get(t, browser(t), srv.URL+"/runs/r1")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.NotContains(t, body, "draft")
	})
	t.Run("wrong bearer", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/runs", nil)
		req.Header.Set("Authorization", "Bearer s3cres")
		resp, err := browser(t).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	})
	t.Run("bearer", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/runs", nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := browser(t).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	})
	t.Run("wrong in the address", func(t *testing.T) {
		resp, _ := get(t, browser(t), srv.URL+"/runs?token=nope")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Empty(t, resp.Cookies())
	})
	t.Run("wrong cookie", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/runs", nil)
		req.AddCookie(&http.Cookie{Name: "dagent_auth", Value: "s3cret"})
		resp, err := browser(t).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	})
	t.Run("in the address, then a cookie", func(t *testing.T) {
		c := browser(t)
		resp, _ := get(t, c, srv.URL+"/runs/r1?token=s3cret&x=1")
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/runs/r1?x=1", resp.Header.Get("Location"), "the token leaves the address")
		var auth *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == "dagent_auth" {
				auth = ck
			}
		}
		require.NotNil(t, auth)
		assert.True(t, auth.HttpOnly)
		assert.Equal(t, http.SameSiteStrictMode, auth.SameSite)
		assert.NotContains(t, auth.Value, "s3cret", "the cookie does not hold the token")
		resp, body := get(t, c, srv.URL+"/runs/r1")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, body, "draft")
	})
	t.Run("in the address of another host's path", func(t *testing.T) {
		for path, want := range map[string]string{
			"//evil.example/x":  "/evil.example/x",
			"/\\evil.example/x": "/evil.example/x",
			"///evil.example":   "/evil.example",
		} {
			resp, _ := get(t, browser(t), srv.URL+path+"?token=s3cret")
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, path)
			assert.Equal(t, want, resp.Header.Get("Location"), "a path of this server, not a host: %s", path)
		}
	})
}

// Ids are shown with their format characters escaped, as outputs are: a
// right-to-left override in a run's or a task's id, or in an uploaded
// file's name, does not reorder the page.
func TestIdsAreShownVisible(t *testing.T) {
	s := journal(t)
	ctx := context.Background()
	const runID, taskID = "r\u202eevil", "t\u2066x"
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: runID, Plan: []byte(`{"agents": {"w": {"prompt": "p"}}, "tasks": [{"id": "t\u2066x", "agent": "w", "input": "x"}]}`)}))
	require.NoError(t, s.CommitTask(ctx, runID, store.Task{ID: taskID, Status: "done", Attempts: 1, Output: []byte(`"ok"`)}))
	require.NoError(t, s.AppendEvents(ctx, runID, []store.Event{{Kind: "task_started", TaskID: taskID, Time: time.Now()}}))
	require.NoError(t, s.SetStatus(ctx, runID, "completed", ""))
	srv, _ := serve(t, web.Options{Store: s})
	c := browser(t)
	runURL := srv.URL + "/runs/" + url.PathEscape(runID)
	for _, u := range []string{srv.URL + "/runs", runURL, runURL + "/tasks/" + url.PathEscape(taskID)} {
		resp, page := get(t, c, u)
		require.Equal(t, http.StatusOK, resp.StatusCode, u)
		assert.NotContains(t, page, "\u202e", u)
		assert.NotContains(t, page, "\u2066", u)
		assert.Contains(t, page, `r\u202eevil`, u)
	}
	_, page := get(t, c, runURL)
	assert.Contains(t, page, `<tr data-task="t\u2066x">`, "the row of the task, which the live page finds by the id it is sent")

	code, page := checkPlan(t, c, srv.URL, `{"tasks": [{"id": "a", "agent": "w", "input": "x"}]}`, "plan\u202enosj.exe")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, page, "\u202e")
	assert.Contains(t, page, `Review of plan\u202enosj.exe:`)
}

func TestHostHeader(t *testing.T) {
	s := journal(t)
	srv, _ := serve(t, web.Options{Store: s, Hosts: []string{"dagent.internal"}})
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	for host, want := range map[string]int{
		"127.0.0.1:" + port:          http.StatusOK,
		"localhost:" + port:          http.StatusOK,
		"[::1]:" + port:              http.StatusOK,
		"dagent.internal":            http.StatusOK,
		"attacker.example:" + port:   http.StatusMisdirectedRequest,
		"attacker.example":           http.StatusMisdirectedRequest,
		"127.0.0.1.attacker.example": http.StatusMisdirectedRequest,
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/runs", nil)
		req.Host = host
		resp, err := browser(t).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, host)
	}
}

func TestPostsNeedCSRF(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	decided := make(chan string, 4)
	srv, _ := serve(t, web.Options{Store: s, Decide: func(_ context.Context, id string, _ map[string]runner.Decision, by string) error {
		decided <- id
		return nil
	}})
	c := browser(t)
	_, page := get(t, c, srv.URL+"/runs/r1")
	token := csrf(t, page)
	action := srv.URL + "/runs/r1/reviews/approve"

	post := func(c *http.Client, form url.Values, header map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	form := func(token string) url.Values { return url.Values{"csrf": {token}, "decision": {"approve"}} }

	assert.Equal(t, http.StatusForbidden, post(c, url.Values{"decision": {"approve"}}, nil), "no token")
	assert.Equal(t, http.StatusForbidden, post(c, form("x"+token), nil), "a wrong token")
	assert.Equal(t, http.StatusForbidden, post(browser(t), form(token), nil), "a token of another session")
	assert.Equal(t, http.StatusForbidden, post(c, form(token), map[string]string{"Sec-Fetch-Site": "cross-site"}), "from another site")
	assert.Equal(t, http.StatusForbidden, post(c, form(token), map[string]string{"Origin": "http://attacker.example"}), "from another origin")
	resp, err := c.Get(action + "?csrf=" + url.QueryEscape(token) + "&decision=approve")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "a GET changes nothing")
	assert.Empty(t, decided, "no refused request decided")

	assert.Equal(t, http.StatusSeeOther, post(c, form(token), map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": srv.URL}))
	select {
	case id := <-decided:
		assert.Equal(t, "r1", id)
	case <-time.After(10 * time.Second):
		t.Fatal("the decision was not taken")
	}
}
