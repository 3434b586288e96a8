package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/web"
)

// No address a browser may ask for breaks the server: every answer is a
// page, a redirect or a refusal, with the security headers, never a
// failure of the server. The seeds are in testdata/fuzz/FuzzRequest.
func FuzzRequest(f *testing.F) {
	s := journal(f)
	start(f, s, "r1", reviewPlan)
	h, err := web.New(web.Options{Store: s, Addr: "127.0.0.1:7700", Decide: decider(s)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close() })
	f.Fuzz(func(t *testing.T, method, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || method == "" || strings.ContainsAny(method, " \t\r\n") || strings.HasSuffix(u.Path, "/live") || u.Path == "/live" {
			return // not a request; or a stream, which lasts
		}
		req := &http.Request{Method: method, URL: u, RequestURI: target, Host: "127.0.0.1:7700", Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		if w.Header().Get("Content-Security-Policy") == "" {
			t.Fatalf("%s %s: no Content-Security-Policy", method, target)
		}
	})
}
