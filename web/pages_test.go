package web_test

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/web"
)

var runLink = regexp.MustCompile(`<tr><td><a href="/runs/([^"]+)">`)

// listed are the runs a runs page lists, in order.
func listed(page string) []string {
	var ids []string
	for _, m := range runLink.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestRunsPage(t *testing.T) {
	s := journal(t)
	ctx := context.Background()
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var all []string
	for i := range 120 {
		id := fmt.Sprintf("run-%03d", i)
		require.NoError(t, s.CreateRun(ctx, store.Run{ID: id, Plan: []byte(`{"tasks": [{"id": "a"}]}`), Created: base.Add(time.Duration(i) * time.Minute)}))
		switch {
		case i%3 == 0:
			require.NoError(t, s.SetStatus(ctx, id, "completed", ""))
		case i%3 == 1:
			require.NoError(t, s.SetStatus(ctx, id, "failed", "it broke"))
		case i == 2:
			// Its owner, on another host, beats its heartbeat: it runs.
			require.NoError(t, s.Acquire(ctx, id, store.Owner{ID: "o", PID: 1, Host: "elsewhere", Heartbeat: time.Now()}, nil))
		}
		all = append([]string{id}, all...)
	}
	srv, _ := serve(t, web.Options{Store: s})
	c := browser(t)

	_, page := get(t, c, srv.URL+"/runs")
	assert.Equal(t, all[:50], listed(page), "newest first, a page of 50")
	assert.Contains(t, page, `<span id="total">120</span>`)
	assert.Contains(t, page, `<a id="next" href="/runs?page=2">`)
	assert.Contains(t, page, `<a id="prev" href="" hidden>`)
	_, page = get(t, c, srv.URL+"/runs?page=3")
	assert.Equal(t, all[100:], listed(page))
	assert.Contains(t, page, `<a id="prev" href="/runs?page=2">`)

	_, page = get(t, c, srv.URL+"/runs?status=failed&page=1")
	ids := listed(page)
	assert.Len(t, ids, 40)
	assert.Equal(t, "run-118", ids[0])
	assert.Contains(t, page, `<input type="checkbox" name="status" value="failed" checked>`)

	_, page = get(t, c, srv.URL+"/runs?status=interrupted&status=running")
	// Run 2 runs; the runs of no status and no live owner died while they ran.
	assert.Contains(t, listed(page), "run-002")
	assert.Len(t, listed(page), 40)
	assert.Contains(t, page, `<a href="/runs/run-005">run-005</a></td><td>2025-01-02 03:09:05 UTC</td><td><span class="status s-interrupted">interrupted</span>`)
	assert.Contains(t, page, `<a href="/runs/run-002">run-002</a></td><td>2025-01-02 03:06:05 UTC</td><td><span class="status s-running">running</span>`)

	for _, bad := range []string{"?status=done", "?page=0", "?page=x"} {
		resp, body := get(t, c, srv.URL+"/runs"+bad)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
		assert.Contains(t, body, `class="error"`)
	}
	resp, body := get(t, c, srv.URL+"/runs?page=9")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, listed(body))
	assert.Contains(t, body, "No runs on this page.")
}

func TestRunAndTaskPages(t *testing.T) {
	s := journal(t)
	start(t, s, "r1", reviewPlan)
	srv, _ := serve(t, web.Options{Store: s})
	c := browser(t)

	_, page := get(t, c, srv.URL+"/runs/r1")
	for _, want := range []string{
		`<span class="status s-waiting" id="run-status">waiting</span>`,
		`<g class="node s-done t-task" data-task="draft"`,
		`<g class="node s-waiting t-human_review" data-task="approve"`,
		`<g class="node s-pending t-task" data-task="send"`,
		`<a href="/runs/r1/tasks/draft">`,
		`<td>3 &#43; 4</td>`,
		`approve: waiting for review`,
		`data-live="/runs/r1/live?after=10"`,
	} {
		assert.Contains(t, page, want)
	}
	// A beginning of the id names the run.
	resp, _ := get(t, c, srv.URL+"/runs/r")
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/runs/r1", resp.Header.Get("Location"))

	_, page = get(t, c, srv.URL+"/runs/r1/tasks/approve")
	for _, want := range []string{
		`<dt>type</dt><dd>human_review</dd>`,
		`<dt>depends on</dt><dd><a href="/runs/r1/tasks/draft">draft</a></dd>`,
		`<pre class="input">Send the draft?</pre>`,
		`<p class="none">No output.</p>`,
	} {
		assert.Contains(t, page, want)
	}
	resp, page = get(t, c, srv.URL+"/runs/r1/tasks/nope")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, page, "run r1 has no task &#34;nope&#34;")
	resp, _ = get(t, c, srv.URL+"/runs/r1/live?after=x")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestStaticAssets(t *testing.T) {
	srv, _ := serve(t, web.Options{Store: journal(t)})
	c := browser(t)
	for path, kind := range map[string]string{"/static/app.js": "text/javascript", "/static/app.css": "text/css", "/static/icon.svg": "image/svg+xml"} {
		resp, body := get(t, c, srv.URL+path)
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, resp.Header.Get("Content-Type"), kind, path)
		assert.NotEmpty(t, body)
	}
	js, _ := get(t, c, srv.URL+"/static/app.js")
	_, body := get(t, c, srv.URL+"/static/app.js")
	assert.Equal(t, http.StatusOK, js.StatusCode)
	assert.NotContains(t, body, "innerHTML", "the script sets text, never markup")
	assert.NotContains(t, body, "eval(")
}

// checkPlan posts a plan to the checker, pasted, or uploaded as name.
func checkPlan(t *testing.T, c *http.Client, base, text, name string) (int, string) {
	t.Helper()
	_, form := get(t, c, base+"/check")
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	require.NoError(t, mw.WriteField("csrf", csrf(t, form)))
	if name == "" {
		require.NoError(t, mw.WriteField("plan", text))
	} else {
		require.NoError(t, mw.WriteField("plan", ""))
		w, err := mw.CreateFormFile("file", name)
		require.NoError(t, err)
		_, err = io.WriteString(w, text)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	resp, err := c.Post(base+"/check", mw.FormDataContentType(), &b)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestPlanChecker(t *testing.T) {
	wide := `{"tasks": [
		{"id": "a", "agent": "fetch", "input": "x"},
		{"id": "b", "agent": "fetch", "input": "y"},
		{"id": "c", "agent": "fetch", "input": "z"},
		{"id": "d", "agent": "fetch", "input": "w"},
		{"id": "sum", "agent": "fetch", "input": "{{results.a}} {{results.b}} {{results.c}} {{results.d}}", "depends_on": ["a", "b", "c", "d"]}]}`

	t.Run("without a catalog", func(t *testing.T) {
		srv, _ := serve(t, web.Options{Store: journal(t)})
		code, page := checkPlan(t, browser(t), srv.URL, wide, "")
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, page, "Review of pasted plan:")
		assert.Contains(t, page, "the agents <code>fetch</code> are taken for workers")
		assert.Contains(t, page, "missing_gate", "the critic's finding of a wide phase")
		assert.Equal(t, 5, strings.Count(page, `<g class="node`), "the graph")
		assert.Contains(t, page, `data-task="sum" transform="translate(252 12)"`, "sum is in the second column")
		assert.Contains(t, page, "pasted plan: score", "the review as dagent lint prints it")
	})
	t.Run("uploaded, against the catalog", func(t *testing.T) {
		reg := registry.New()
		require.NoError(t, reg.Register("fetch", registry.Worker{Description: "fetches", Agent: echo}))
		srv, _ := serve(t, web.Options{Store: journal(t), Catalog: reg})
		code, page := checkPlan(t, browser(t), srv.URL, strings.ReplaceAll(wide, `"agent": "fetch", "input": "w"`, `"agent": "fetcher", "input": "w"`), "plan.json")
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, page, "Review of plan.json:")
		assert.Contains(t, page, "<code>unknown_worker</code>")
		assert.Contains(t, page, "agent &#34;fetcher&#34; is not defined")
		assert.NotContains(t, page, "taken for workers")
	})
	t.Run("not a plan", func(t *testing.T) {
		srv, _ := serve(t, web.Options{Store: journal(t)})
		code, page := checkPlan(t, browser(t), srv.URL, "no plan here", "")
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, page, "1/10")
		assert.NotContains(t, page, `<g class="node`)
	})
	t.Run("nothing", func(t *testing.T) {
		srv, _ := serve(t, web.Options{Store: journal(t)})
		code, page := checkPlan(t, browser(t), srv.URL, "", "")
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Contains(t, page, "no plan: paste one, or choose a file")
	})
	t.Run("url-encoded", func(t *testing.T) {
		srv, _ := serve(t, web.Options{Store: journal(t)})
		c := browser(t)
		_, form := get(t, c, srv.URL+"/check")
		resp, err := c.PostForm(srv.URL+"/check", url.Values{"csrf": {csrf(t, form)}, "plan": {wide}})
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	})
}

func TestMetrics(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "dagent_runs_total 3\n") })
	srv, _ := serve(t, web.Options{Store: journal(t), Metrics: metrics, Token: "s3cret"})
	resp, _ := get(t, browser(t), srv.URL+"/metrics")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the token guards the metrics too")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := browser(t).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "dagent_runs_total 3\n", string(body))

	srv, _ = serve(t, web.Options{Store: journal(t)})
	resp, _ = get(t, browser(t), srv.URL+"/metrics")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no metrics without a handler")
}

func TestLongTimeline(t *testing.T) {
	s := journal(t)
	var tasks []string
	for i := range 300 {
		tasks = append(tasks, fmt.Sprintf(`{"id": "t%03d", "agent": "echo", "input": "x"}`, i))
	}
	start(t, s, "long", `{"tasks": [`+strings.Join(tasks, ",")+`]}`)
	srv, _ := serve(t, web.Options{Store: s})
	c := browser(t)
	_, page := get(t, c, srv.URL+"/runs/long")
	// 300 tasks started and done, the run's and the phase's start and end.
	assert.Contains(t, page, "104 earlier ones are left out")
	assert.Equal(t, 500, strings.Count(page, `<tr data-seq=`))
	assert.Contains(t, page, `<tr data-seq="105">`)
	assert.Contains(t, page, `data-live="/runs/long/live?after=604"`)
	_, page = get(t, c, srv.URL+"/runs/long?events=all")
	assert.Equal(t, 604, strings.Count(page, `<tr data-seq=`))
	assert.NotContains(t, page, "left out")
}

// The timeline says the planner's and the executor's events in words, as
// dagent show does.
func TestTimelineWords(t *testing.T) {
	s := journal(t)
	ctx := context.Background()
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "m", Mission: "Count the rows"}))
	require.NoError(t, s.AppendEvents(ctx, "m", []store.Event{
		{Kind: string(durable.EventPlanned), Time: time.Now(), Data: []byte(`{"tasks": 3, "attempt": 2}`)},
		{Kind: string(durable.EventPlanCached), Time: time.Now(), Data: []byte(`{"tasks": 1}`)},
		{Kind: string(executor.EventHalted), Time: time.Now(), Data: []byte(`{"halt": "max_replans"}`)},
	}))
	srv, _ := serve(t, web.Options{Store: s})
	_, page := get(t, browser(t), srv.URL+"/runs/m")
	assert.Contains(t, page, "<td>planned 3 tasks in 2 attempts</td>")
	assert.Contains(t, page, "<td>reused the cached plan of 1 task</td>")
	assert.Contains(t, page, "<td>replanning halted (max_replans): the replans reached their limit</td>")
	assert.NotContains(t, page, "mission_planned")
}

func TestUploadsLeaveNoFiles(t *testing.T) {
	// A part of a multipart form larger than what is kept in memory is
	// written to a file of the temporary directory.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv, _ := serve(t, web.Options{Store: journal(t)})
	code, page := checkPlan(t, browser(t), srv.URL, strings.Repeat("x", 3<<19), "big.json")
	require.Equal(t, http.StatusOK, code, page)
	assert.Contains(t, page, "Review of big.json:")
	assert.Eventually(t, func() bool {
		left, err := filepath.Glob(filepath.Join(tmp, "multipart-*"))
		require.NoError(t, err)
		return len(left) == 0
	}, 2*time.Second, 20*time.Millisecond, "the upload's file is removed once the page is served")
}

func TestPlanCheckerTakesPlansOfAFewMiB(t *testing.T) {
	srv, _ := serve(t, web.Options{Store: journal(t)})
	c := browser(t)
	const limit = 4 << 20
	for _, tt := range []struct {
		name, upload string
		size, code   int
	}{
		{name: "pasted, at the limit", size: limit, code: http.StatusOK},
		{name: "pasted, a byte over", size: limit + 1, code: http.StatusRequestEntityTooLarge},
		{name: "pasted, far over", size: 5 * limit, code: http.StatusRequestEntityTooLarge},
		{name: "uploaded, a byte over", upload: "big.json", size: limit + 1, code: http.StatusRequestEntityTooLarge},
		{name: "uploaded, far over", upload: "big.json", size: 5 * limit, code: http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, page := checkPlan(t, c, srv.URL, strings.Repeat(" ", tt.size-2)+"{}", tt.upload)
			require.Equal(t, tt.code, code)
			if code != http.StatusOK {
				assert.Contains(t, page, "the plan checker takes plans of up to 4 MiB: check a larger one with dagent lint")
			}
		})
	}
	t.Run("url-encoded, far over", func(t *testing.T) {
		_, form := get(t, c, srv.URL+"/check")
		resp, err := c.PostForm(srv.URL+"/check", url.Values{"csrf": {csrf(t, form)}, "plan": {strings.Repeat("x", 5*limit)}})
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		assert.Contains(t, string(body), "the plan checker takes plans of up to 4 MiB")
	})
}

// Every id a journal may hold has a page: ids of dots, of slashes, of
// a query's characters. The beginning of several ids is a 400 that names
// them.
func TestRunsOfAnyID(t *testing.T) {
	s := journal(t)
	ctx := context.Background()
	ids := []string{".", "..", "a/b", "a?b#c"}
	for k, id := range ids {
		require.NoError(t, s.CreateRun(ctx, store.Run{ID: id, Plan: []byte(`{"tasks": [{"id": "x", "agent": "w"}]}`), Created: time.Now().Add(time.Duration(k) * time.Second)}))
	}
	srv, _ := serve(t, web.Options{Store: s})
	c := browser(t)
	_, page := get(t, c, srv.URL+"/runs")
	hrefs := listed(page)
	require.Len(t, hrefs, len(ids))
	assert.ElementsMatch(t, []string{"%2E", "%2E%2E", "a%2Fb", "a%3Fb%23c"}, hrefs)
	for _, href := range hrefs {
		resp, page := get(t, c, srv.URL+"/runs/"+href)
		require.Equal(t, http.StatusOK, resp.StatusCode, href)
		id, err := url.PathUnescape(href)
		require.NoError(t, err)
		assert.Contains(t, page, `<h1>Run <span class="id">`+template.HTMLEscapeString(id)+`</span>`, href)
		resp, _ = get(t, c, srv.URL+"/runs/"+href+"/tasks/x")
		assert.Equal(t, http.StatusOK, resp.StatusCode, href)
	}

	resp, page := get(t, c, srv.URL+"/runs/a")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, page, "is the beginning of 2 runs&#39; ids (a?b#c, a/b, ...); give more of it")
	resp, _ = get(t, c, srv.URL+"/runs/a/live?after=0")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
