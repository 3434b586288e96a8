package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/web"
)

// gated is a Go worker that reports each start on started and waits for
// release before it returns its input.
type gated struct {
	started chan string
	release chan struct{}
}

func newGated() *gated { return &gated{started: make(chan string, 8), release: make(chan struct{})} }

func (g *gated) Run(ctx context.Context, req agent.Request) (agent.Result, error) {
	g.started <- req.TaskID
	select {
	case <-g.release:
		return agent.Result{Output: req.Input}, nil
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
}

// state is what a run page's stream sends.
type state struct {
	Status string `json:"status"`
	Resume string `json:"resume"`
	Tasks  []struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Attempts int    `json:"attempts"`
	} `json:"tasks"`
	Events []struct {
		Seq  int    `json:"seq"`
		Line string `json:"line"`
	} `json:"events"`
}

func (s state) task(id string) string {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t.Status
		}
	}
	return ""
}

// until reads a run page's stream until ok holds of a state, and returns
// the states read.
func until(t *testing.T, ev *sse, ok func(state) bool) []state {
	t.Helper()
	var seen []state
	deadline := time.AfterFunc(20*time.Second, func() { ev.body.Close() })
	defer deadline.Stop()
	for {
		kind, data, err := ev.next()
		require.NoError(t, err, "the stream ended before the state came; states seen: %+v", seen)
		if kind != "state" {
			continue
		}
		var st state
		require.NoError(t, json.Unmarshal([]byte(data), &st))
		seen = append(seen, st)
		if ok(st) {
			return seen
		}
	}
}

func TestRunPageFollowsTheJournal(t *testing.T) {
	s := journal(t)
	srv, _ := serve(t, web.Options{Store: s, Poll: 20 * time.Millisecond})
	g := newGated()
	done := make(chan error, 1)
	go func() {
		_, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, `{"tasks": [
			{"id": "slow", "agent": "gate", "input": "x"},
			{"id": "after", "agent": "gate", "input": "y", "depends_on": ["slow"]}]}`)}, durable.WithAgent("gate", g), durable.WithRunID("live"))
		done <- err
	}()
	require.Equal(t, "slow", <-g.started)

	ev := openSSE(t, browser(t), srv.URL+"/runs/live/live?after=0")
	var all []state
	seen := until(t, ev, func(st state) bool { return st.task("slow") == "running" })
	all = append(all, seen...)
	assert.Equal(t, "pending", seen[len(seen)-1].task("after"))
	assert.Equal(t, "running", seen[len(seen)-1].Status)
	g.release <- struct{}{}
	all = append(all, until(t, ev, func(st state) bool { return st.task("slow") == "done" && st.task("after") == "running" })...)
	g.release <- struct{}{}
	seen = until(t, ev, func(st state) bool { return st.Status == "completed" })
	all = append(all, seen...)
	require.NoError(t, <-done)
	last := seen[len(seen)-1]
	assert.Equal(t, "done", last.task("after"))

	// Every event of the run came once, in order, over the stream.
	journaled, err := s.EventsAfter(context.Background(), "live", 0)
	require.NoError(t, err)
	require.NotEmpty(t, journaled)
	var want, got []int
	for _, e := range journaled {
		want = append(want, e.Seq)
	}
	for _, st := range all {
		for _, e := range st.Events {
			got = append(got, e.Seq)
		}
	}
	assert.Equal(t, want, got)

	// A stream goes on after the event its page shows.
	from := until(t, openSSE(t, browser(t), srv.URL+"/runs/live/live?after=2"), func(state) bool { return true })
	require.NotEmpty(t, from[0].Events)
	assert.Equal(t, 3, from[0].Events[0].Seq)
}

func TestLiveStreamOfAnUnknownRun(t *testing.T) {
	srv, _ := serve(t, web.Options{Store: journal(t), Poll: 20 * time.Millisecond})
	resp, body := get(t, browser(t), srv.URL+"/runs/nope/live?after=0")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, body, `no run "nope" in the journal`)
}

// loads counts the runs read whole from a store.
type loads struct {
	store.Store
	n atomic.Int64
}

func (l *loads) Load(ctx context.Context, id string) (*store.Record, error) {
	l.n.Add(1)
	return l.Store.Load(ctx, id)
}

// The pages of a run read it once for all of them, and only when a task
// changes: its events come as they are.
func TestPagesOfARunReadItOnce(t *testing.T) {
	s := &loads{Store: journal(t)}
	srv, _ := serve(t, web.Options{Store: s, Poll: 20 * time.Millisecond})
	g := newGated()
	done := make(chan error, 1)
	go func() {
		_, err := durable.Start(context.Background(), s.Store, durable.Spec{Plan: mustPlan(t, `{"tasks": [
			{"id": "slow", "agent": "gate", "input": "x"},
			{"id": "after", "agent": "gate", "input": "y", "depends_on": ["slow"]}]}`)}, durable.WithAgent("gate", g), durable.WithRunID("live"))
		done <- err
	}()
	require.Equal(t, "slow", <-g.started)
	const pages = 5
	var streams []*sse
	for range pages {
		ev := openSSE(t, browser(t), srv.URL+"/runs/live/live?after=0")
		until(t, ev, func(st state) bool { return st.task("slow") == "running" })
		streams = append(streams, ev)
	}
	assert.Equal(t, int64(1), s.n.Load(), "the pages of a run read it once")

	s.n.Store(0)
	g.release <- struct{}{}
	require.Equal(t, "after", <-g.started)
	for _, ev := range streams {
		until(t, ev, func(st state) bool { return st.task("slow") == "done" && st.task("after") == "running" })
	}
	assert.Less(t, s.n.Load(), int64(pages), "a change is read once, not once a page: %d reads", s.n.Load())
	g.release <- struct{}{}
	require.NoError(t, <-done)
}

func TestTaskPageStreamsNoTimeline(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	srv, _ := serve(t, web.Options{Store: s, Poll: 20 * time.Millisecond})
	c := browser(t)
	_, page := get(t, c, srv.URL+"/runs/r1/tasks/draft")
	m := regexp.MustCompile(`data-live="(/runs/r1/live\?after=(\d+))"`).FindStringSubmatch(page)
	require.NotNil(t, m, "the task page follows its run")
	assert.NotEqual(t, "0", m[2], "from the run's last event")
	first := until(t, openSSE(t, c, srv.URL+m[1]), func(state) bool { return true })
	assert.Empty(t, first[0].Events, "the page shows no timeline of the run: none is sent")
	assert.Equal(t, "waiting", first[0].Status)
}

func TestRunsPageFollowsTheJournal(t *testing.T) {
	s := journal(t)
	srv, _ := serve(t, web.Options{Store: s, Poll: 20 * time.Millisecond})
	ev := openSSE(t, browser(t), srv.URL+"/live?status=waiting")
	type rows struct {
		Rows []struct {
			ID, Status, Href string
		} `json:"rows"`
		Total int `json:"total"`
	}
	next := func() rows {
		t.Helper()
		kind, data, err := ev.next()
		require.NoError(t, err)
		require.Equal(t, "runs", kind)
		var r rows
		require.NoError(t, json.Unmarshal([]byte(data), &r))
		return r
	}
	assert.Empty(t, next().Rows)
	start(t, s, "first", reviewPlan)
	r := next()
	require.Len(t, r.Rows, 1)
	assert.Equal(t, "first", r.Rows[0].ID)
	assert.Equal(t, "waiting", r.Rows[0].Status)
	assert.Equal(t, "/runs/first", r.Rows[0].Href)
	// A run of another status is not of this page; a waiting one comes first.
	start(t, s, "done", `{"tasks": [{"id": "a", "agent": "echo", "input": "x"}]}`)
	start(t, s, "second", reviewPlan)
	r = next()
	require.Len(t, r.Rows, 2)
	assert.Equal(t, "second", r.Rows[0].ID)
	assert.Equal(t, 2, r.Total)
}

// serveTimed starts the server of o as serve does, on an http.Server with
// read and write timeouts of d.
func serveTimed(t *testing.T, o web.Options, d time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = d, d
	o.Addr = srv.Listener.Addr().String()
	h, err := web.New(o)
	require.NoError(t, err)
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return srv
}

func TestStreamsOutliveTheServersTimeouts(t *testing.T) {
	s := journal(t)
	srv := serveTimed(t, web.Options{Store: s, Poll: 20 * time.Millisecond}, 200*time.Millisecond)
	ev := openSSE(t, browser(t), srv.URL+"/live")
	kind, _, err := ev.next()
	require.NoError(t, err)
	require.Equal(t, "runs", kind)
	time.Sleep(600 * time.Millisecond)
	start(t, s, "later", reviewPlan)
	kind, data, err := ev.next()
	require.NoError(t, err, "the stream goes on past the server's read and write timeouts")
	assert.Equal(t, "runs", kind)
	assert.Contains(t, data, `"id":"later"`)
}

func TestLiveStreamsAreBounded(t *testing.T) {
	srv, _ := serve(t, web.Options{Store: journal(t), Poll: 20 * time.Millisecond, MaxStreams: 2})
	c := browser(t)
	first := openSSE(t, c, srv.URL+"/live")
	openSSE(t, c, srv.URL+"/live?status=waiting")
	resp, body := get(t, c, srv.URL+"/live")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "30", resp.Header.Get("Retry-After"))
	assert.Contains(t, body, "too many live pages are open (2): close some, or reload this page later")

	// A page that goes away makes room for another.
	first.body.Close()
	assert.Eventually(t, func() bool {
		resp, err := c.Get(srv.URL + "/live")
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 20*time.Millisecond)
}
