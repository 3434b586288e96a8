package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/dagent-dev/dagent/web"
)

// A host serves its journal; a decision made on a run's page resumes the
// run with the host's workers.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "web")
	defer os.RemoveAll(dir)
	s, _ := sqlite.Open(filepath.Join(dir, "dagent.db"))
	defer s.Close()
	p, _ := plan.Parse([]byte(`{"tasks": [
		{"id": "draft", "agent": "echo", "input": "hello"},
		{"id": "approve", "type": "human_review", "input": "Send it?", "depends_on": ["draft"]}]}`))
	ctx := context.Background()
	durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("echo", echo), durable.WithRunID("r1"))

	h, err := web.New(web.Options{
		Store: s,
		Addr:  "127.0.0.1:7700",
		Decide: func(ctx context.Context, id string, d map[string]runner.Decision, by string) error {
			_, err := durable.Resume(ctx, s, id, durable.WithAgent("echo", echo), durable.WithReviews(d), durable.WithReviewer(by))
			return err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()

	req := httptest.NewRequest(http.MethodGet, "/runs/r1", nil)
	req.Host = "127.0.0.1:7700"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	fmt.Println(w.Code, strings.Contains(w.Body.String(), "Send it?"))
	// Output: 200 true
}

// A server that other machines can reach needs a token.
func ExampleCheckAddr() {
	fmt.Println(web.CheckAddr("127.0.0.1:7700", ""))
	fmt.Println(web.CheckAddr("0.0.0.0:7700", ""))
	fmt.Println(web.CheckAddr("0.0.0.0:7700", "s3cret"))
	// Output:
	// <nil>
	// a server that listens beyond loopback needs a token: 0.0.0.0:7700 is not a loopback address
	// <nil>
}
