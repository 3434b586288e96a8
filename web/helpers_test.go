package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/dagent-dev/dagent/web"
)

// journal is a fresh SQLite journal.
func journal(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "dagent.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// echo is a Go worker whose output is its input.
var echo = agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
	return agent.Result{Output: req.Input, Usage: agent.Usage{PromptTokens: 3, CompletionTokens: 4}}, nil
})

// reviewPlan is a plan that waits for a review of its draft, then sends.
const reviewPlan = `{"tasks": [
	{"id": "draft", "agent": "echo", "input": "the draft"},
	{"id": "approve", "type": "human_review", "input": "Send {{results.draft}}?", "depends_on": ["draft"]},
	{"id": "send", "agent": "echo", "input": "sent", "depends_on": ["approve"]}]}`

func mustPlan(t testing.TB, src string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(src))
	require.NoError(t, err)
	return p
}

// start runs src on the journal under id with the echo worker, and more
// workers.
func start(t testing.TB, s store.Store, id, src string, opts ...durable.Option) *durable.Outcome {
	t.Helper()
	opts = append([]durable.Option{durable.WithAgent("echo", echo), durable.WithRunID(id)}, opts...)
	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, src)}, opts...)
	require.NoError(t, err)
	return out
}

// decider resumes runs of the journal with the echo worker, as a host
// would.
func decider(s store.Store) web.DecideFunc {
	return func(ctx context.Context, id string, decisions map[string]runner.Decision, by string) error {
		_, err := durable.Resume(ctx, s, id, durable.WithAgent("echo", echo), durable.WithReviews(decisions), durable.WithReviewer(by))
		return err
	}
}

// serve starts the server of o on a loopback port; o.Addr is set.
func serve(t testing.TB, o web.Options) (*httptest.Server, *web.Server) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	o.Addr = srv.Listener.Addr().String()
	h, err := web.New(o)
	require.NoError(t, err)
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return srv, h
}

// browser is a client with a cookie jar that does not follow redirects.
func browser(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// get fetches url and returns the response's status and body.
func get(t testing.TB, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of a page's forms.
func csrf(t testing.TB, page string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(page)
	require.NotNil(t, m, "the page has no form with a CSRF token")
	return m[1]
}

// sse reads the events of a stream of server-sent events.
type sse struct {
	r    *bufio.Reader
	body io.Closer
}

func openSSE(t testing.TB, c *http.Client, url string) *sse {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	t.Cleanup(func() { resp.Body.Close() })
	return &sse{r: bufio.NewReader(resp.Body), body: resp.Body}
}

// next returns the kind and the data of the next event.
func (s *sse) next() (kind, data string, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			kind = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case line == "" && kind != "":
			return kind, data, nil
		}
	}
}
