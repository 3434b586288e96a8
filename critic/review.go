package critic

import (
	"context"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
)

// Option configures a review.
type Option func(*config)

type config struct {
	registry *registry.Registry
	workers  []string        // more workers, beside the registry's
	tools    map[string]bool // nil: tools are not checked
	limits   plan.Limits
}

// WithRegistry checks the plan against the host's workers: tasks must name
// workers it has (unknown_worker), and inputs must read the slots they
// declare.
func WithRegistry(r *registry.Registry) Option {
	return func(c *config) { c.registry = r }
}

// WithWorkers names workers the host runs beside the registry's — Go
// agents given to the runner with runner.WithAgent — so that tasks may name
// them.
func WithWorkers(names ...string) Option {
	return func(c *config) { c.workers = append(c.workers, names...) }
}

// WithTools names the tools of the host's catalog; agents the plan defines
// may only use these (unknown_tool). Without it, tools are not checked.
func WithTools(names ...string) Option {
	return func(c *config) {
		if c.tools == nil {
			c.tools = make(map[string]bool, len(names))
		}
		for _, n := range names {
			c.tools[n] = true
		}
	}
}

// WithLimits sets the limits the plan is validated against. Default
// plan.DefaultLimits().
func WithLimits(l plan.Limits) Option {
	return func(c *config) { c.limits = l }
}

// Review checks p statically and returns the report.
func Review(p *plan.Plan, opts ...Option) Report {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if p == nil {
		p = &plan.Plan{} // reviewed as the empty plan it is
	}
	r := &reviewer{p: p, c: c}
	r.run()
	rep := Report{Issues: r.issues}
	rep.finish()
	if len(p.Tasks) == 0 {
		rep.Score, rep.Summary = 1, NoPlan
	}
	return rep
}

// NoPlan is the summary of a plan without tasks, or of a text from which
// no plan could be read; its score is 1.
const NoPlan = "No plan could be read from the text; nothing can run."

// ReviewSource parses src as Parse does — raw LLM output included — and
// reviews what it finds. The problems Parse reports (no JSON at all,
// malformed JSON, bad field values) are critical issues of the report, so
// a text that is not a plan yields a report, never an error: one with score
// 1 and the summary NoPlan.
func ReviewSource(src []byte, opts ...Option) Report {
	var c config
	for _, o := range opts {
		o(&c)
	}
	p, err := plan.Parse(src, plan.WithLimits(c.limits))
	var parsed []Issue
	for _, prob := range plan.Problems(err) {
		parsed = append(parsed, problemIssue(p, prob))
	}
	if err != nil && parsed == nil {
		parsed = append(parsed, Issue{Check: string(plan.CodeInvalidJSON), Severity: Critical, Message: err.Error(), order: -1})
	}
	if p == nil || len(p.Tasks) == 0 && parsed != nil {
		// Nothing can run, whatever the count of issues says: the score is
		// the lowest.
		rep := Report{Issues: parsed}
		rep.finish()
		rep.Score, rep.Summary = 1, NoPlan
		return rep
	}
	rep := Review(p, opts...)
	rep.Issues = append(parsed, rep.Issues...)
	rep.finish()
	if len(p.Tasks) == 0 {
		rep.Score, rep.Summary = 1, NoPlan
	}
	return rep
}

// Reviewer adds findings to a static review: an LLM that reads the plan,
// say. It gets the static report so that it does not repeat it.
type Reviewer interface {
	Review(ctx context.Context, p *plan.Plan, static Report) ([]Issue, error)
}

// ErrReviewer wraps the error of a Reviewer that failed.
var ErrReviewer = errors.New("reviewer failed")

// ReviewWith reviews p statically, then asks rv for more findings and
// merges them into the report. When rv fails, the report still holds every
// static finding and the error matches ErrReviewer.
func ReviewWith(ctx context.Context, p *plan.Plan, rv Reviewer, opts ...Option) (Report, error) {
	rep := Review(p, opts...)
	if rv == nil || p == nil {
		return rep, nil
	}
	more, err := rv.Review(ctx, p, rep)
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrReviewer, err)
	}
	index := make(map[string]int, len(p.Tasks))
	for i := range p.Tasks {
		if _, dup := index[p.Tasks[i].ID]; !dup {
			index[p.Tasks[i].ID] = i
		}
	}
	for _, is := range more {
		if is.Severity.rank() == 0 {
			is.Severity = Info
		}
		is.order = -1
		if i, ok := index[is.TaskID]; ok && is.TaskID != "" {
			is.order = i
			if !is.Pos.IsValid() {
				is.Pos = p.Tasks[i].Pos
			}
		}
		rep.Issues = append(rep.Issues, is)
	}
	rep.finish()
	return rep, nil
}
