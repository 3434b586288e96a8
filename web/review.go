package web

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
)

// reviewView is a pending review of a waiting run: what it asks, what it
// reviews, and the form that decides it.
type reviewView struct {
	TaskID   string
	Action   string
	Prompt   string
	Upstream []upstream
}

// upstream is the result of a task a review reviews.
type upstream struct {
	ID, Href, Output string
}

// reviews are the pending reviews of run.
func reviews(run *durable.Run) []reviewView {
	var out []reviewView
	for _, rv := range run.Reviews() {
		v := reviewView{TaskID: prose.Visible(rv.TaskID), Action: runHref(run.ID) + "/reviews/" + segment(rv.TaskID), Prompt: prose.Visible(rv.Prompt)}
		for _, up := range rv.Upstream {
			if o := up.Output; len(o) > 0 && string(o) != "null" {
				v.Upstream = append(v.Upstream, upstream{prose.Visible(up.ID), taskHref(run.ID, up.ID), prose.Visible(progress.Text(o))})
			}
		}
		out = append(out, v)
	}
	return out
}

// resumeState is a resume the server started with a decision.
type resumeState struct {
	by, decided string
	started     time.Time
	running     bool
	err         error
}

// resumeView is a resume as the run page shows it.
type resumeView struct {
	By, Decided, Started string
	Running              bool
	Error                string
}

// key tells one state of a resume from another, for a live page.
func (v *resumeView) key() string {
	switch {
	case v == nil:
		return ""
	case v.Running:
		return "running"
	case v.Error != "":
		return "failed: " + v.Error
	}
	return "ended"
}

// resumeView is the resume the server runs, or last ran, of run id; nil
// when it started none.
func (s *Server) resumeView(id string) *resumeView {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.deciding[id]
	if st == nil {
		return nil
	}
	v := &resumeView{By: st.by, Decided: st.decided, Started: stamp(st.started), Running: st.running}
	if st.err != nil {
		v.Error = prose.Visible(st.err.Error())
	}
	return v
}

// maxByRunes bounds the name a person gives as who decided, and
// maxCommentRunes the comment of a decision, which the journal keeps and
// the run's timeline shows: an explanation, not a document (an approval
// gives one as its output).
const (
	maxByRunes      = 100
	maxCommentRunes = 2000
)

// decide takes a decision of a pending review from its form, and resumes
// the run with it in the background, as dagent resume --review does; the
// run page then shows the run go on.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	if s.o.Decide == nil {
		s.fail(w, r, http.StatusForbidden, errors.New("this server was started without a way to resume runs: decide with dagent resume --review"))
		return
	}
	id, task := r.PathValue("id"), r.PathValue("task")
	d, what, err := decision(r)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	by, err := decider(r)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	run, err := durable.Load(r.Context(), s.o.Store, id)
	if err != nil || run.ID != id {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("no run %q in the journal", id))
		return
	}
	if status, _ := run.Shown(); status != durable.StatusWaiting || run.Tasks[task].Status != string(runner.TaskWaiting) {
		s.fail(w, r, http.StatusConflict, fmt.Errorf("run %s does not wait for a review of %q: the run is %s", id, task, status))
		return
	}
	st := &resumeState{by: by, decided: what + " " + task, started: time.Now(), running: true}
	s.mu.Lock()
	if prev := s.deciding[id]; prev != nil && prev.running {
		s.mu.Unlock()
		s.fail(w, r, http.StatusConflict, fmt.Errorf("run %s is being resumed already, with the decision of %s", id, prev.by))
		return
	}
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusServiceUnavailable, errors.New("the server is closing"))
		return
	}
	s.deciding[id] = st
	s.resumes.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.resumes.Done()
		err := s.o.Decide(s.ctx, id, map[string]runner.Decision{task: d}, by)
		s.mu.Lock()
		st.running, st.err = false, err
		s.mu.Unlock()
	}()
	http.Redirect(w, r, runHref(id), http.StatusSeeOther)
}

// decision reads the form's decision as dagent resume reads one: approve
// or reject alone as --review ID=approve gives it, and with a comment or an
// output as a --reviews file gives it, {"approved", "comment", "output"}.
// what is approve or reject.
func decision(r *http.Request) (d runner.Decision, what string, err error) {
	what = r.PostFormValue("decision")
	if what != "approve" && what != "reject" {
		return d, what, fmt.Errorf("decision %q: want approve or reject", what)
	}
	comment, output := r.PostFormValue("comment"), strings.TrimSpace(r.PostFormValue("output"))
	if utf8.RuneCountInString(comment) > maxCommentRunes {
		return d, what, fmt.Errorf("comment: at most %d characters; give a longer text as the output of an approval", maxCommentRunes)
	}
	if comment == "" && output == "" {
		d, err = runner.ParseDecision(what)
		return d, what, err
	}
	doc := map[string]any{"approved": what == "approve"}
	if comment != "" {
		doc["comment"] = comment
	}
	if output != "" {
		if what != "approve" {
			return d, what, errors.New("output: a rejected review has no output; leave it empty, or approve")
		}
		out, err := jsonv.DecodeBytes([]byte(output))
		if err != nil {
			return d, what, fmt.Errorf("output: not JSON (%w); write text in double quotes", err)
		}
		doc["output"] = out
	}
	d, err = runner.ParseDecision(doc)
	return d, what, err
}

// decider is who decided: the name the form gives, else the address the
// request came from.
func decider(r *http.Request) (string, error) {
	by := strings.TrimSpace(r.PostFormValue("by"))
	if utf8.RuneCountInString(by) > maxByRunes {
		return "", fmt.Errorf("by: a name of at most %d characters", maxByRunes)
	}
	if by != prose.OneLine(by) || by != prose.Visible(by) {
		return "", errors.New("by: a name on one line, of visible characters")
	}
	if by != "" {
		return by, nil
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "someone at " + host + " (no name given)", nil
}
