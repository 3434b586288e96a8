package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// A live page reads the journal every poll, over a stream of server-sent
// events the server writes what changed to. Other processes write the
// journal: reading it again is the one way to see what they did.

// keepAlive is how long a stream may stay silent: a comment line then
// tells a proxy between the page and the server that it is alive.
const keepAlive = 15 * time.Second

// writeTimeout bounds each write of a stream. A stream lasts as long as
// its page, beyond any write timeout of the http.Server; its writes get
// a deadline of their own, so that a page that stops reading is let go.
const writeTimeout = 30 * time.Second

// defaultMaxStreams is how many live streams a server keeps open at once
// unless told: each reads the journal every poll.
const defaultMaxStreams = 64

// errTooManyStreams: a page asked for a live stream while the server
// keeps as many open as it may.
var errTooManyStreams = errors.New("too many live pages are open")

// errGone: the page a stream was for is gone.
var errGone = errors.New("the page is gone")

// stream is a stream of server-sent events to one page.
type stream struct {
	// ctx ends when the page is gone, the server closes or the stream
	// is closed.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // the keep-alive ended
	w      http.ResponseWriter
	rc     *http.ResponseController
	timer  *time.Timer

	mu   sync.Mutex
	sent time.Time // when it last wrote
}

// stream starts a stream of events on w; nil when w cannot stream, or
// when the server keeps as many streams open as it may: the handler has
// answered then. The handler closes it before it returns.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) *stream {
	if s.streams.Add(1) > int64(s.o.MaxStreams) {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "30")
		http.Error(w, fmt.Sprintf("dagent serve: %v (%d): close some, or reload this page later", errTooManyStreams, s.o.MaxStreams), http.StatusServiceUnavailable)
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	// A stream reads nothing more of its request: the server's read
	// timeout, which would end it, does not apply. Not every
	// ResponseWriter has deadlines: one without has no timeouts either.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		s.streams.Add(-1)
		return nil
	}
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.ctx, cancel)
	st := &stream{ctx: ctx, cancel: cancel, done: make(chan struct{}), w: w, rc: rc, sent: time.Now()}
	go func() {
		defer close(st.done)
		defer s.streams.Add(-1)
		defer stop()
		t := time.NewTicker(keepAlive / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			st.mu.Lock()
			quiet := time.Since(st.sent) >= keepAlive
			st.mu.Unlock()
			if quiet && !st.write([]byte(": alive\n\n")) {
				return
			}
		}
	}()
	return st
}

// close ends the stream: nothing is written to it once close returns.
func (st *stream) close() {
	st.cancel()
	<-st.done
}

// wait waits d, and reports whether the stream goes on: false once the
// page is gone or the server closes. The first wait returns at once.
func (st *stream) wait(d time.Duration) bool {
	if st.timer == nil {
		st.timer = time.NewTimer(0)
	} else {
		st.timer.Reset(d)
	}
	select {
	case <-st.ctx.Done():
		return false
	case <-st.timer.C:
		return true
	}
}

// send sends v as JSON in an event of kind event, and reports whether the
// page is still there.
func (st *stream) send(event string, v any) bool {
	b, err := jsonv.Marshal(v)
	if err != nil {
		return st.sendRaw("failure", []byte(`{"error": "the update could not be encoded"}`))
	}
	return st.sendRaw(event, b)
}

// sendRaw sends data, one line of JSON, in an event of kind event.
func (st *stream) sendRaw(event string, data []byte) bool {
	b := make([]byte, 0, len(event)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return st.write(b)
}

func (st *stream) write(b []byte) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ctx.Err() != nil {
		return false
	}
	st.sent = time.Now()
	_ = st.rc.SetWriteDeadline(st.sent.Add(writeTimeout))
	if _, err := st.w.Write(b); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

// failureDoc is an error as a live page shows it.
func failureDoc(err error) map[string]string {
	return map[string]string{"error": err.Error()}
}
