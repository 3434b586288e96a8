package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/critic/lint"
	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/plan"
)

// checkView is the plan checker: the form, and once a plan is posted, the
// critic's review of it and its graph.
type checkView struct {
	CSRF string
	// Plan is the text of the plan checked, put back in the form.
	Plan    string
	Checked bool
	Name    string
	Score   int
	Summary string
	Issues  []issueView
	// Unchecked are the agents taken for workers without a catalog to
	// check them against.
	Unchecked []string
	// Text is the review as dagent lint prints it.
	Text  string
	Graph *graph
}

// issueView is a finding of the critic.
type issueView struct {
	Severity, Check, Where, Message, Recommendation string
}

func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "check", "Check a plan", &checkView{CSRF: s.g.csrf(r)})
}

// check reviews the plan the form gives, pasted or uploaded (the upload
// wins), as dagent lint does, and draws it as dagent graph lays it out.
func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	data, name, err := postedPlan(r)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if len(data) > maxCheckedPlan {
		s.fail(w, r, http.StatusRequestEntityTooLarge, errPlanTooLarge)
		return
	}
	v := &checkView{CSRF: s.g.csrf(r), Plan: string(data), Checked: true, Name: name}
	var copts []critic.Option
	var popts []plan.Option
	p, _ := plan.Parse(data)
	switch {
	case s.o.Catalog != nil:
		copts, popts = append(copts, critic.WithCatalog(s.o.Catalog)), append(popts, plan.WithCatalog(s.o.Catalog))
	case p != nil:
		v.Unchecked = lint.HostWorkers(p)
		copts, popts = append(copts, critic.WithWorkers(v.Unchecked...)), append(popts, plan.WithWorkers(v.Unchecked...))
	}
	rep := critic.ReviewSource(data, copts...)
	v.Score, v.Summary = rep.Score, rep.Summary
	for _, is := range rep.Issues {
		where := is.TaskID
		if is.Field != "" {
			where += "." + is.Field
		}
		if is.Pos.Line > 0 {
			where = fmt.Sprintf("%d:%d %s", is.Pos.Line, is.Pos.Column, where)
		}
		v.Issues = append(v.Issues, issueView{
			Severity: string(is.Severity), Check: is.Check, Where: visible(where), Message: visible(is.Message), Recommendation: visible(is.Recommendation),
		})
	}
	var text bytes.Buffer
	if err := report.Write(&text, report.Text, []report.File{{Path: name, Report: rep}}, report.Options{}); err == nil {
		v.Text = visible(text.String())
	}
	if p != nil {
		if d, _ := p.DAG(popts...); d != nil {
			v.Graph = layout(d)
		}
	}
	s.render(w, r, "check", "Check a plan", v)
}

// postedPlan is the plan the form gives: the uploaded file, else the
// pasted text; name names it in the review.
func postedPlan(r *http.Request) (data []byte, name string, err error) {
	if r.MultipartForm != nil {
		if fhs := r.MultipartForm.File["file"]; len(fhs) > 0 && fhs[0].Size > 0 {
			f, err := fhs[0].Open()
			if err != nil {
				return nil, "", fmt.Errorf("the uploaded plan: %w", err)
			}
			defer f.Close()
			data, err := io.ReadAll(f)
			if err != nil {
				return nil, "", fmt.Errorf("the uploaded plan: %w", err)
			}
			return data, fhs[0].Filename, nil
		}
	}
	text := r.PostFormValue("plan")
	if text == "" {
		return nil, "", fmt.Errorf("no plan: paste one, or choose a file")
	}
	return []byte(text), "pasted plan", nil
}
