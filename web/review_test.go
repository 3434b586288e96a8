package web_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/web"
)

// decide posts a review's form from the run page as a browser would, and
// returns the response's status and body.
func decide(t *testing.T, c *http.Client, base, runID, task string, form url.Values) (int, string) {
	t.Helper()
	_, page := get(t, c, base+"/runs/"+runID)
	form.Set("csrf", csrf(t, page))
	resp, err := c.PostForm(base+"/runs/"+runID+"/reviews/"+task, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// waitStatus waits for the journal to hold run id in status.
func waitStatus(t *testing.T, s store.Store, id string, status durable.Status) *durable.Run {
	t.Helper()
	var r *durable.Run
	require.Eventually(t, func() bool {
		var err error
		r, err = durable.Load(context.Background(), s, id)
		return err == nil && r.Status == status
	}, 20*time.Second, 10*time.Millisecond)
	return r
}

func TestDecisionResumesTheRun(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	srv, _ := serve(t, web.Options{Store: s, Decide: decider(s)})
	c := browser(t)

	code, _ := decide(t, c, srv.URL, "r1", "approve", url.Values{"decision": {"approve"}, "by": {"Ada"}, "comment": {"fine"}, "output": {`{"ship": true}`}})
	require.Equal(t, http.StatusSeeOther, code)
	r := waitStatus(t, s, "r1", durable.StatusCompleted)
	assert.JSONEq(t, `{"ship": true}`, string(r.Tasks["approve"].Output), "the output given is the review's")
	assert.Equal(t, "done", r.Tasks["send"].Status)

	// The page says who resumed it, and offers no form any more.
	require.Eventually(t, func() bool {
		_, page := get(t, c, srv.URL+"/runs/r1")
		return strings.Contains(page, "Resumed with the decision of Ada (approve approve")
	}, 10*time.Second, 10*time.Millisecond)
	_, page := get(t, c, srv.URL+"/runs/r1")
	assert.NotContains(t, page, `class="decide"`)
	assert.Contains(t, page, "<td>approve: approved by Ada: fine</td>", "the timeline says who decided")
}

func TestRejectionAsTheCommandGivesIt(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	var mu sync.Mutex
	var got map[string]runner.Decision
	var by string
	srv, _ := serve(t, web.Options{Store: s, Decide: func(ctx context.Context, id string, d map[string]runner.Decision, who string) error {
		mu.Lock()
		got, by = d, who
		mu.Unlock()
		return decider(s)(ctx, id, d, who)
	}})
	code, _ := decide(t, browser(t), srv.URL, "r1", "approve", url.Values{"decision": {"reject"}})
	require.Equal(t, http.StatusSeeOther, code)
	r := waitStatus(t, s, "r1", durable.StatusFailed)
	mu.Lock()
	defer mu.Unlock()
	want, err := runner.ParseDecision("reject")
	require.NoError(t, err)
	assert.Equal(t, map[string]runner.Decision{"approve": want}, got, "as dagent resume --review approve=reject decides")
	assert.Equal(t, "someone at 127.0.0.1 (no name given)", by)
	assert.Equal(t, "failed", r.Tasks["approve"].Status)
}

func TestBadDecisions(t *testing.T) {
	s := journal(t)
	start(t, s, "waits", reviewPlan)
	start(t, s, "done", `{"tasks": [{"id": "a", "agent": "echo", "input": "x"}]}`)
	srv, _ := serve(t, web.Options{Store: s, Decide: func(context.Context, string, map[string]runner.Decision, string) error {
		t.Error("a bad decision resumed the run")
		return nil
	}})
	for _, tc := range []struct {
		name, run, task string
		form            url.Values
		code            int
		says            string
	}{
		{"no decision", "waits", "approve", url.Values{}, http.StatusBadRequest, "want approve or reject"},
		{"another decision", "waits", "approve", url.Values{"decision": {"maybe"}}, http.StatusBadRequest, "want approve or reject"},
		{"output not JSON", "waits", "approve", url.Values{"decision": {"approve"}, "output": {"ship it"}}, http.StatusBadRequest, "output: not JSON"},
		{"output of a rejection", "waits", "approve", url.Values{"decision": {"reject"}, "output": {`"x"`}}, http.StatusBadRequest, "a rejected review has no output"},
		{"a long name", "waits", "approve", url.Values{"decision": {"approve"}, "by": {strings.Repeat("n", 101)}}, http.StatusBadRequest, "at most 100 characters"},
		{"a name of two lines", "waits", "approve", url.Values{"decision": {"approve"}, "by": {"Ada\nLovelace"}}, http.StatusBadRequest, "one line"},
		{"an output over the form's limit", "waits", "approve", url.Values{"decision": {"approve"}, "output": {`"` + strings.Repeat("x", 1<<20) + `"`}},
			http.StatusRequestEntityTooLarge, "a decision&#39;s form holds at most 1 MiB"},
		{"not a review", "waits", "draft", url.Values{"decision": {"approve"}}, http.StatusConflict, "does not wait for a review of &#34;draft&#34;"},
		{"a run that does not wait", "done", "a", url.Values{"decision": {"approve"}}, http.StatusConflict, "the run is completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := browser(t)
			_, page := get(t, c, srv.URL+"/runs/waits")
			tc.form.Set("csrf", csrf(t, page))
			resp, err := c.PostForm(srv.URL+"/runs/"+tc.run+"/reviews/"+tc.task, tc.form)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tc.code, resp.StatusCode)
			assert.Contains(t, string(b), tc.says)
		})
	}
}

func TestOneResumeAtATime(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	release := make(chan struct{})
	srv, h := serve(t, web.Options{Store: s, Decide: func(ctx context.Context, _ string, _ map[string]runner.Decision, _ string) error {
		select {
		case <-release:
			return errors.New("the registry changed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	c := browser(t)
	code, _ := decide(t, c, srv.URL, "r1", "approve", url.Values{"decision": {"approve"}, "by": {"Ada"}})
	require.Equal(t, http.StatusSeeOther, code)
	_, page := get(t, c, srv.URL+"/runs/r1")
	assert.Contains(t, page, "Resuming with the decision of Ada")
	assert.NotContains(t, page, `class="decide"`, "no second decision while the first resumes the run")
	_, check := get(t, c, srv.URL+"/check")
	code, body := decide2(t, c, srv.URL, "r1", check)
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "being resumed already, with the decision of Ada")

	close(release)
	require.Eventually(t, func() bool {
		_, page = get(t, c, srv.URL+"/runs/r1")
		return strings.Contains(page, "failed: the registry changed")
	}, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, page, `class="decide"`, "a failed resume may be decided again")
	require.NoError(t, h.Close())
}

// decide2 posts a decision with the CSRF token of page, a page of the
// session.
func decide2(t *testing.T, c *http.Client, base, runID, page string) (int, string) {
	t.Helper()
	resp, err := c.PostForm(base+"/runs/"+runID+"/reviews/approve", url.Values{"csrf": {csrf(t, page)}, "decision": {"approve"}})
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestNoDeciderShowsReviewsOnly(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	srv, _ := serve(t, web.Options{Store: s})
	c := browser(t)
	_, page := get(t, c, srv.URL+"/runs/r1")
	assert.Contains(t, page, "Send the draft?")
	assert.Contains(t, page, "dagent resume r1 --review approve=approve")
	assert.NotContains(t, page, `class="decide"`)
	_, check := get(t, c, srv.URL+"/check")
	resp, err := c.PostForm(srv.URL+"/runs/r1/reviews/approve", url.Values{"csrf": {csrf(t, check)}, "decision": {"approve"}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	r, err := durable.Load(context.Background(), s, "r1")
	require.NoError(t, err)
	assert.Equal(t, durable.StatusWaiting, r.Status)
}
