package web

import (
	"net/http"
	"time"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// A live page reads the journal every poll, over a stream of server-sent
// events the server writes what changed to. Other processes write the
// journal: reading it again is the one way to see what they did.

// keepAlive is how long a stream may stay silent: a comment line then
// tells a proxy that it is alive, and the server that the page is gone.
const keepAlive = 15 * time.Second

// stream is a stream of server-sent events to one page.
type stream struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	rc     *http.ResponseController
	timer  *time.Timer
	silent time.Duration
}

// stream starts a stream of events on w; nil when w cannot stream.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) *stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return nil
	}
	return &stream{s: s, w: w, r: r, rc: rc}
}

// wait waits d, and reports whether the stream goes on: false once the
// page is gone or the server closes.
func (st *stream) wait(d time.Duration) bool {
	if st.timer == nil {
		st.timer = time.NewTimer(0) // the first wait is none
	} else {
		st.timer.Reset(d)
	}
	select {
	case <-st.r.Context().Done():
		return false
	case <-st.s.ctx.Done():
		return false
	case <-st.timer.C:
	}
	if st.silent += d; st.silent >= keepAlive {
		return st.write([]byte(": alive\n\n"))
	}
	return true
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
	st.silent = 0
	if _, err := st.w.Write(b); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

// failureDoc is an error as a live page shows it.
func failureDoc(err error) map[string]string {
	return map[string]string{"error": err.Error()}
}
