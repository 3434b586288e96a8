package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/web"
)

// page serves path on h, as the server's own process sees a request: no
// network, the time to draw the page.
func page(b *testing.B, h http.Handler, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
}

// The runs page of a journal of 10,000 runs: its first page, and a page
// of the runs of one status.
func BenchmarkRunsPage(b *testing.B) {
	s := journal(b)
	ctx := context.Background()
	base := time.Now().Add(-24 * time.Hour)
	statuses := []string{"completed", "failed", "waiting", "cancelled"}
	for i := range 10_000 {
		id := fmt.Sprintf("20250101T000000-%08x", i)
		require.NoError(b, s.CreateRun(ctx, store.Run{ID: id, Mission: fmt.Sprintf("mission %d", i),
			Plan: []byte(`{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"]}]}`), Created: base.Add(time.Duration(i) * time.Second)}))
		require.NoError(b, s.SetStatus(ctx, id, statuses[i%len(statuses)], ""))
	}
	h, err := web.New(web.Options{Store: s, Addr: "127.0.0.1:0"})
	require.NoError(b, err)
	defer h.Close()
	for _, path := range []string{"/runs", "/runs?status=failed&page=20"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page(b, h, path)
			}
		})
	}
}

// The page of a run of a 1,000-task plan that ran to its end: the graph,
// the task table and the timeline of its 2,042 events (the newest 500 shown).
func BenchmarkRunPage(b *testing.B) {
	s := journal(b)
	const layers, width = 20, 50
	var tasks []map[string]any
	for l := range layers {
		for k := range width {
			t := map[string]any{"id": fmt.Sprintf("t%02d_%02d", l, k), "agent": "echo", "input": fmt.Sprintf("step %d of layer %d", k, l)}
			if l > 0 {
				t["depends_on"] = []string{fmt.Sprintf("t%02d_%02d", l-1, k), fmt.Sprintf("t%02d_%02d", l-1, (k+1)%width)}
			}
			tasks = append(tasks, t)
		}
	}
	doc, err := json.Marshal(map[string]any{"tasks": tasks})
	require.NoError(b, err)
	out := start(b, s, "big", string(doc))
	require.Equal(b, "completed", string(out.Status))
	h, err := web.New(web.Options{Store: s, Addr: "127.0.0.1:0"})
	require.NoError(b, err)
	defer h.Close()
	for _, path := range []string{"/runs/big", "/runs/big/tasks/t10_10"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page(b, h, path)
			}
		})
	}
}
