package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// Errors of [New].
var (
	// ErrNoToken: the server would listen on an address other machines
	// reach, and has no token to ask them for.
	ErrNoToken = errors.New("a server that listens beyond loopback needs a token")
	// ErrNoStore: no journal to show.
	ErrNoStore = errors.New("no store to show")
)

// DecideFunc resumes the journaled run runID with the decisions of its
// pending reviews, by task id, as decided by the person named by. It
// returns when the run stops again: it completed, failed, or waits for
// another review. The server calls it in the background, with a context
// that [Server.Close] cancels.
type DecideFunc func(ctx context.Context, runID string, decisions map[string]runner.Decision, by string) error

// Options configure a [Server].
type Options struct {
	// Store is the journal the pages show. Other processes may write to
	// it while the server runs: their runs show up as they go.
	Store store.Store
	// Addr is the address the server listens on, host:port. A host that
	// is not a loopback address needs a Token.
	Addr string
	// Hosts are host names, besides the listening host and the loopback
	// names, that requests may be addressed to: a reverse proxy's, the
	// machine's DNS name. A request whose Host header names another is
	// refused, which defeats DNS rebinding.
	Hosts []string
	// Token, when set, is asked of every request: once as ?token= on a
	// page's address, which the browser then keeps in a cookie, or as an
	// Authorization: Bearer header.
	Token string
	// Decide, when set, resumes a run with the decisions made on its
	// page; without it, pending reviews are shown and cannot be decided.
	Decide DecideFunc
	// Catalog, when set, is what the plan checker checks plans against:
	// the workers, their outputs and the tools of the host. Without it,
	// every agent a plan names and does not define is taken for a worker.
	Catalog plan.Catalog
	// Metrics, when set, is served at /metrics.
	Metrics http.Handler
	// Observer, when set, is given the events the journal gets while the
	// server runs — of the runs other processes run, and of those its
	// decisions resume — as the runner's events ([store.Event.Runner]):
	// each once, in order within each run, from one goroutine that reads
	// the journal every second, or every Poll when that is longer. A run under way when the server starts is observed
	// from there on: what happened before the server started is not
	// given, so that an observer counting events — the metrics served at
	// /metrics — counts each once however often the server restarts.
	Observer runner.Observer
	// Poll is how often a live page reads the journal for what changed;
	// 0 is 250ms.
	Poll time.Duration
	// MaxStreams bounds the live streams open at once, each a page that
	// follows the journal and reads it every Poll: a page that asks for
	// one more is answered 503 Service Unavailable, and is not live. 0 is
	// 64.
	MaxStreams int
}

// Server is the web view of a journal: an [http.Handler] of the runs, each
// run's graph, tasks and timeline, its pending reviews, and a plan
// checker. It is safe for concurrent use.
type Server struct {
	o     Options
	g     *guard
	mux   *http.ServeMux
	h     http.Handler // mux behind the guard
	pages map[string]*template.Template

	// ctx is the context of the resumes the server starts; Close cancels
	// it, ends the live streams and waits for the resumes.
	ctx     context.Context
	cancel  context.CancelFunc
	resumes sync.WaitGroup
	// tailing ends when the Observer's reader does.
	tailing sync.WaitGroup

	// streams counts the live streams open.
	streams atomic.Int64
	// follows are the runs live pages follow.
	follows follows

	mu       sync.Mutex
	deciding map[string]*resumeState // by run id
}

//go:embed assets
var assets embed.FS

// defaultPoll is how often live pages read the journal.
const defaultPoll = 250 * time.Millisecond

// New returns the server of o. It fails with [ErrNoStore] without a
// store, and with [ErrNoToken] when o.Addr is not a loopback address and
// there is no token.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, ErrNoStore
	}
	if o.Poll <= 0 {
		o.Poll = defaultPoll
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = defaultMaxStreams
	}
	g, err := newGuard(o)
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, g: g, pages: pages, mux: http.NewServeMux(), deciding: map[string]*resumeState{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	m := s.mux
	m.Handle("GET /static/", http.StripPrefix("/static/", staticFiles(static)))
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/runs", http.StatusSeeOther) })
	m.HandleFunc("GET /runs", s.runs)
	m.HandleFunc("GET /live", s.runsLive)
	m.HandleFunc("GET /runs/{id}", s.run)
	m.HandleFunc("GET /runs/{id}/live", s.runLive)
	m.HandleFunc("GET /runs/{id}/tasks/{task}", s.task)
	m.HandleFunc("POST /runs/{id}/reviews/{task}", s.posted(decisionForm, s.decide))
	m.HandleFunc("GET /check", s.checkForm)
	m.HandleFunc("POST /check", s.posted(checkForm, s.check))
	if o.Metrics != nil {
		m.Handle("GET /metrics", o.Metrics)
	}
	s.h = g.secure(m)
	if o.Observer != nil {
		t := newTail(o.Store, o.Observer, time.Now())
		s.tailing.Go(func() { t.follow(s.ctx, max(o.Poll, tailEvery)) })
	}
	return s, nil
}

// ServeHTTP serves the pages, after the checks every request passes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.h.ServeHTTP(w, r)
}

// Close ends the live streams and the Observer's reader, cancels the
// resumes the server started — their runs stop as cancelled, to be
// resumed — and waits for them.
func (s *Server) Close() error {
	// Under mu: a decision being accepted has either counted its resume,
	// which Wait then waits for, or finds the server closing.
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.tailing.Wait()
	s.resumes.Wait()
	return nil
}

// form is what a form's body may hold, and what the page says of one
// that holds more.
type form struct {
	limit    int64
	tooLarge error
}

// maxCheckedPlan bounds a plan given to the plan checker, pasted or
// uploaded. A check holds the plan several times over — its text, the
// parsed plan, the critic's review, the graph and the page that shows
// them, some seven times the plan's size in all — and anyone who may use
// the page may post one: 4 MiB holds a plan of the 10,000 tasks plan.Parse
// takes at most, with a few lines of input each, and keeps a check to some
// tens of MiB. A larger plan is for dagent lint, which takes up to
// plan.Limits.MaxPlanBytes.
const maxCheckedPlan = 4 << 20

// errPlanTooLarge: a plan posted to the checker is over maxCheckedPlan.
var errPlanTooLarge = fmt.Errorf("the plan checker takes plans of up to %d MiB: check a larger one with dagent lint", maxCheckedPlan>>20)

var (
	// checkForm holds a plan, and room for the rest of the form.
	checkForm = form{limit: maxCheckedPlan + 64<<10, tooLarge: errPlanTooLarge}
	// decisionForm holds a decision: a name, a comment and an output
	// typed in.
	decisionForm = form{limit: 1 << 20, tooLarge: errors.New("a decision's form holds at most 1 MiB: give a larger output with dagent resume --reviews FILE")}
)

// posted refuses a request that changes state unless it comes from a page
// of this server, or when its form holds more than f allows.
func (s *Server) posted(f form, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, f.limit)
		defer removeUploads(r)
		if err := s.g.checkPost(r); err != nil {
			var tooLarge *http.MaxBytesError
			switch {
			case errors.Is(err, errForged):
				s.fail(w, r, http.StatusForbidden, err)
			case errors.As(err, &tooLarge):
				s.fail(w, r, http.StatusRequestEntityTooLarge, f.tooLarge)
			default:
				s.fail(w, r, http.StatusBadRequest, err)
			}
			return
		}
		h(w, r)
	}
}

// removeUploads removes the files that parsing r's multipart form wrote.
// net/http removes those of the request it handed its handler, and r is
// a copy of it (the guard adds the session to its context): a request's
// files would otherwise stay on disk.
func removeUploads(r *http.Request) {
	if r.MultipartForm != nil {
		r.MultipartForm.RemoveAll()
	}
}

// staticFiles serves the files of fsys, and answers any other name — one
// that is no file of it, or no valid name at all, which the file server
// would answer with a 500 — as not found.
func staticFiles(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, err := fs.Stat(fsys, r.URL.Path); err != nil || info.IsDir() {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}
