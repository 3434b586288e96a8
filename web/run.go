package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// maxEvents is how many events of its timeline a run page shows, the
// newest, unless asked for all.
const maxEvents = 500

// statusEvery is how often a live run page reads the run's status though
// no event came: the run's process may have died.
const statusEvery = 2 * time.Second

// runView is the run page.
type runView struct {
	ID      string
	Status  string // as shown: interrupted for a run whose process died
	Owner   string // the live process that runs it; empty when none does
	Error   string
	Started string
	Updated string
	Took    string
	Mission string
	Catalog string
	// Versions counts the plans the run adopted: more than one for a run
	// that replanned, whose graph is of its last plan.
	Versions int
	Graph    *graph
	Tasks    []taskRow
	Events   []eventRow
	// Earlier counts the events left out, the oldest, of a long
	// timeline; AllEvents is the page with all of them.
	Earlier   int
	AllEvents string
	// Seq is the last event's, from which the live stream goes on.
	Seq  int
	Live string
	// Reviews are the pending reviews of a waiting run.
	Reviews []reviewView
	// Resume is the resume this server runs, or ran, for a decision;
	// ResumeKey tells its state from another for the live stream.
	Resume    *resumeView
	ResumeKey string
	// CanDecide says the server may resume the run with a decision.
	CanDecide bool
	CSRF      string
}

// taskRow is a task of the run page, and of what its live stream sends.
type taskRow struct {
	ID       string `json:"id"`
	Href     string `json:"href"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Duration string `json:"duration"`
	Tokens   string `json:"tokens"`
	Why      string `json:"why"`
}

// eventRow is an event of a run's timeline.
type eventRow struct {
	Seq  int    `json:"seq"`
	Time string `json:"time"`
	Task string `json:"task"`
	Line string `json:"line"`
}

// runState is what a run page's live stream sends: the run's status, its
// tasks and the events since the last it sent.
type runState struct {
	Status string     `json:"status"`
	Resume string     `json:"resume"`
	Tasks  []taskRow  `json:"tasks"`
	Events []eventRow `json:"events"`
}

// loadRun reads the run of the request's {id}; on failure it has written
// the error page.
func (s *Server) loadRun(w http.ResponseWriter, r *http.Request) *durable.Run {
	id := r.PathValue("id")
	run, err := durable.Load(r.Context(), s.o.Store, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("no run %q in the journal", id))
		return nil
	case err != nil:
		s.fail(w, r, http.StatusInternalServerError, err)
		return nil
	case run.ID != id:
		// A beginning of the id names the run: its page is under its id.
		http.Redirect(w, r, runHref(run.ID), http.StatusSeeOther)
		return nil
	}
	return run
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	run := s.loadRun(w, r)
	if run == nil {
		return
	}
	v := s.runView(r, run)
	s.render(w, r, "run", "Run "+run.ID, v)
}

func (s *Server) runView(r *http.Request, run *durable.Run) *runView {
	rec := run.Record
	status, live := run.Shown()
	v := &runView{
		ID: run.ID, Status: string(status), Error: visible(run.Error),
		Started: stamp(run.Created), Updated: stamp(run.Updated), Took: progress.Round(run.Updated.Sub(run.Created)).String(),
		Mission: visible(run.Spec.Mission), Catalog: visible(run.Spec.Catalog), Versions: len(run.Plans),
		Tasks: taskRows(run, status, live), Live: runHref(run.ID) + "/live",
		CSRF: s.g.csrf(r), CanDecide: s.o.Decide != nil, Resume: s.resumeView(run.ID),
	}
	v.ResumeKey = v.Resume.key()
	if o := rec.Owner; live {
		v.Owner = fmt.Sprintf("process %d on %s", o.PID, o.Host)
	}
	events := rec.Events
	if n := len(events); n > maxEvents && r.URL.Query().Get("events") != "all" {
		events, v.Earlier, v.AllEvents = events[n-maxEvents:], n-maxEvents, runHref(run.ID)+"?events=all"
	}
	v.Events = eventRows(run.ID, events)
	v.Seq = lastSeq(run)
	v.Live += "?after=" + strconv.Itoa(v.Seq)
	if p := run.Plan(); p != nil {
		v.Graph = drawn(p, run)
	}
	if status == durable.StatusWaiting {
		v.Reviews = reviews(run)
	}
	return v
}

// lastSeq is the number of run's last event; 0 for none.
func lastSeq(run *durable.Run) int {
	if n := len(run.Record.Events); n > 0 {
		return run.Record.Events[n-1].Seq
	}
	return 0
}

// drawn lays p out, each task in its state on the run, linked to its page.
func drawn(p *plan.Plan, run *durable.Run) *graph {
	// The structure is all a drawing needs: a plan whose agents the
	// catalog does not have any more is drawn all the same.
	d, _ := p.DAG()
	if d == nil {
		return nil
	}
	g := layout(d)
	for k := range g.Nodes {
		n := &g.Nodes[k]
		n.State = string(runner.TaskPending)
		if t, ok := run.Tasks[n.ID]; ok {
			n.State = t.Status
		}
		n.Href = taskHref(run.ID, n.ID)
	}
	return g
}

// taskHref is the address of a task's page.
func taskHref(runID, taskID string) string {
	return runHref(runID) + "/tasks/" + url.PathEscape(taskID)
}

// taskRows are the tasks of run, shown with status and live ([durable.Run.Shown]).
func taskRows(run *durable.Run, status durable.Status, live bool) []taskRow {
	rows := make([]taskRow, 0, len(run.Order))
	for _, id := range run.Order {
		rows = append(rows, taskRowOf(run.ID, run.Tasks[id], status, live))
	}
	return rows
}

func taskRowOf(runID string, t durable.TaskView, status durable.Status, live bool) taskRow {
	return taskRow{
		ID: t.ID, Href: taskHref(runID, t.ID), Status: t.Status, Attempts: t.Attempts,
		Duration: duration(t.Task), Tokens: tokens(t.Tokens), Why: prose.Excerpt(visible(t.Why(status, live)), 120),
	}
}

func duration(t store.Task) string {
	if t.Started.IsZero() && t.Duration == 0 {
		return ""
	}
	return progress.Round(t.Duration).String()
}

func tokens(u store.Usage) string {
	if u.Prompt+u.Completion == 0 {
		return ""
	}
	return fmt.Sprintf("%d + %d", u.Prompt, u.Completion)
}

func eventRows(runID string, events []store.Event) []eventRow {
	rows := make([]eventRow, 0, len(events))
	for _, e := range events {
		line := e.Kind
		if d, ok := durable.DecisionOf(e); ok {
			line = e.TaskID + ": " + d.String()
		} else if ev, err := e.Runner(runID); err == nil {
			line = progress.Line(ev)
		}
		rows = append(rows, eventRow{Seq: e.Seq, Time: e.Time.Local().Format("15:04:05.000"), Task: e.TaskID, Line: prose.Visible(line)})
	}
	return rows
}

// visible is untrusted text as a page shows it: its control and format
// characters escaped, so that none reorders what is shown.
func visible(s string) string { return prose.Visible(s) }

// runLive streams a run page's changes: every event appended after the
// one of ?after=, and the run's status and tasks when they change. It
// follows the run while a live process runs it, and then watches for it
// to start again: a resume, here or in another process. A run the journal
// does not hold is a 404, before any stream starts.
//
// The events come from [durable.Watch], which reads only those after the
// last it passed on. The run is read again for its tasks' states only
// when the events say a task's state changed, once for all the pages that
// follow it ([follows]).
func (s *Server) runLive(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	after, err := strconv.Atoi(r.URL.Query().Get("after"))
	if err != nil || after < 0 {
		http.Error(w, "after: want the number of the last event the page shows", http.StatusBadRequest)
		return
	}
	f := s.follows.follow(id)
	defer s.follows.stop(id)
	run, err := f.read(r.Context(), s.o.Store, after)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && run.ID != id:
		http.Error(w, fmt.Sprintf("no run %q in the journal", id), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	st := s.stream(w, r)
	if st == nil {
		return
	}
	defer st.close()
	ctx := st.ctx
	var last runState
	// send sends the state of run, with events, when it changed; false
	// once the page is gone.
	send := func(run *durable.Run, events []store.Event) bool {
		status, live := run.Shown()
		now := runState{Status: string(status), Resume: s.resumeView(run.ID).key(), Tasks: taskRows(run, status, live)}
		for _, e := range events {
			if e.Seq > after {
				now.Events = append(now.Events, eventRows(run.ID, []store.Event{e})...)
				after = e.Seq
			}
		}
		if len(now.Events) == 0 && now.Status == last.Status && now.Resume == last.Resume && slices.Equal(now.Tasks, last.Tasks) {
			return true
		}
		last = now
		return st.send("state", now)
	}
	// reread reads the run again, as new as the events up to seq at
	// least: nil when it cannot, which the page is told of. It reports
	// false once the page is gone, or the run is: the stream ends, and the
	// page's next one is a 404.
	reread := func(seq int) (*durable.Run, bool) {
		run, err := f.read(ctx, s.o.Store, seq)
		switch {
		case errors.Is(err, store.ErrNotFound):
			st.send("failure", failureDoc(err))
			return nil, false
		case err != nil:
			return nil, ctx.Err() == nil && st.send("failure", failureDoc(err))
		}
		return run, true
	}
	if !send(run, run.Record.Events) {
		return
	}
	for {
		status, err := durable.Watch(ctx, s.o.Store, id, after, s.o.Poll, func(events []store.Event) error {
			if tasksChanged(events) {
				next, ok := reread(events[len(events)-1].Seq)
				if !ok {
					return errGone
				}
				if next != nil {
					run = next
				}
			}
			// The events, whether or not the run could be read again.
			if !send(run, events) {
				return errGone
			}
			return nil
		})
		switch {
		case ctx.Err() != nil || errors.Is(err, errGone):
			return
		case err != nil:
			if !st.send("failure", failureDoc(err)) {
				return
			}
		case string(status) != last.Status || s.resumeView(id).key() != last.Resume:
			// It stopped, or a resume of this server started or ended:
			// what the events did not say, the run read again does.
			f.stale()
			next, ok := reread(after)
			if !ok {
				return
			}
			if next != nil {
				run = next
				if !send(run, nil) {
					return
				}
			}
		}
		if !st.wait(statusEvery) {
			return
		}
	}
}

// tasksChanged reports whether events change the state of a task of the
// run page: its status, attempts, duration, tokens or diagnosis.
func tasksChanged(events []store.Event) bool {
	for _, e := range events {
		switch runner.EventKind(e.Kind) {
		case runner.EventRunStarted, runner.EventRunFinished, runner.EventTaskStarted, runner.EventTaskRetried,
			runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped, runner.EventTaskWaiting:
			return true
		}
	}
	return false
}

// follows are the runs live pages follow, each read once for all of
// them: a change is read once, however many pages show it.
type follows struct {
	mu   sync.Mutex
	runs map[string]*followed
}

// followed is a run live pages follow.
type followed struct {
	id    string
	pages int // under follows.mu

	mu  sync.Mutex
	run *durable.Run // the run as last read; nil: read it again
	seq int          // the last event run holds
}

// follow counts one more page of run id, and returns it.
func (fs *follows) follow(id string) *followed {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.runs == nil {
		fs.runs = map[string]*followed{}
	}
	f := fs.runs[id]
	if f == nil {
		f = &followed{id: id}
		fs.runs[id] = f
	}
	f.pages++
	return f
}

// stop counts one page of run id less: a run no page follows is let go.
func (fs *follows) stop(id string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.runs[id]; f != nil {
		if f.pages--; f.pages == 0 {
			delete(fs.runs, id)
		}
	}
}

// read returns the run as read last if it holds the events up to seq,
// else reads it again. The pages of the run wait for one read.
func (f *followed) read(ctx context.Context, s store.Store, seq int) (*durable.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run != nil && f.seq >= seq {
		return f.run, nil
	}
	run, err := durable.Load(ctx, s, f.id)
	if err != nil {
		return nil, err
	}
	f.run, f.seq = run, lastSeq(run)
	return run, nil
}

// stale makes the next read read the run again: what changed is not in
// the events (the run's status, its owner).
func (f *followed) stale() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run = nil
}

// taskView is a task's page.
type taskView struct {
	RunID, RunHref string
	RunStatus      string
	taskRow
	Agent     string
	Type      string
	DependsOn []link
	Started   string
	Error     string
	Diagnosis string
	Input     string
	Output    string
	HasOutput bool
	Events    []eventRow
	Live      string
}

// link is a task linked to its page.
type link struct{ ID, Href string }

func (s *Server) task(w http.ResponseWriter, r *http.Request) {
	run := s.loadRun(w, r)
	if run == nil {
		return
	}
	t, err := run.Task(r.PathValue("task"))
	var unknown *durable.UnknownTaskError
	if errors.As(err, &unknown) {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("run %s has no task %q", run.ID, unknown.TaskID))
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	status, live := run.Shown()
	v := &taskView{RunID: run.ID, RunHref: runHref(run.ID), RunStatus: string(status), taskRow: taskRowOf(run.ID, t.TaskView, status, live),
		Started: stamp(t.Started), Error: visible(t.Error), Diagnosis: visible(t.Diagnosis), Live: runHref(run.ID) + "/live?after=" + strconv.Itoa(lastSeq(run))}
	if pt := t.Plan; pt != nil {
		v.Agent, v.Type, v.Input = visible(pt.Agent), string(pt.Type), visible(t.Input)
		for _, dep := range pt.DependsOn {
			v.DependsOn = append(v.DependsOn, link{dep, taskHref(run.ID, dep)})
		}
	}
	if out := t.Output; len(out) > 0 && string(out) != "null" {
		v.Output, v.HasOutput = visible(progress.Text(out)), true
	}
	v.Events = eventRows(run.ID, t.Events)
	s.render(w, r, "task", "Task "+t.ID+" of run "+run.ID, v)
}
