package critic

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

// Option configures a review.
type Option func(*config)

type config struct {
	catalog    plan.Catalog
	workers    []string // more workers, beside the catalog's
	limits     plan.Limits
	predicates *verify.Set
}

// planOptions are the options the plan is checked with.
func (c *config) planOptions() []plan.Option {
	opts := []plan.Option{plan.WithLimits(c.limits), plan.WithWorkers(c.workers...)}
	if c.catalog != nil {
		opts = append(opts, plan.WithCatalog(c.catalog))
	}
	return opts
}

// WithCatalog checks the plan against the host's catalog — a
// *registry.Registry is one: tasks must name workers it has
// (unknown_worker), inputs must read the slots they declare
// (undeclared_slot), and agents the plan defines may use only its tools
// (unknown_tool). Without it, workers and tools are not checked; a catalog
// that has nothing, such as a nil *registry.Registry, makes every worker
// and tool unknown.
func WithCatalog(c plan.Catalog) Option {
	return func(cfg *config) { cfg.catalog = c }
}

// WithWorkers names workers the host runs beside the catalog's — Go
// agents given to the runner with runner.WithAgent — so that tasks may
// name them.
func WithWorkers(names ...string) Option {
	return func(c *config) { c.workers = append(c.workers, names...) }
}

// WithLimits sets the limits the plan is checked against. Default
// [plan.DefaultLimits].
func WithLimits(l plan.Limits) Option {
	return func(c *config) { c.limits = l }
}

// WithPredicates compiles the plan's predicates in s, so that a runner
// handed the same set evaluates the compilations the review checked, and a
// repaired plan recompiles only its new predicates. Without it, the review
// keeps what checking each predicate found, not the compiled programs, as
// nothing will evaluate them.
func WithPredicates(s *verify.Set) Option {
	return func(c *config) { c.predicates = s }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Review checks p statically and returns the report. It checks the plan
// once, as [plan.Plan.DAG] does with the host's options, and reviews the
// result as [ReviewDAG] does.
func Review(p *plan.Plan, opts ...Option) Report {
	c := newConfig(opts)
	if p == nil {
		p = &plan.Plan{} // reviewed as the empty plan it is
	}
	d, err := p.DAG(c.planOptions()...)
	return review(p, d, err, c)
}

// ReviewDAG reviews a plan that is already checked: the problems of
// d.Err() are its critical issues, and the design checks read d's graph.
// Options that describe the host ([WithCatalog], [WithWorkers], [WithLimits])
// are those d was checked with and are not applied again; d.Catalog()
// says whether workers were checked.
func ReviewDAG(d *plan.DAG, opts ...Option) Report {
	return review(d.Plan(), d, d.Err(), newConfig(opts))
}

func review(p *plan.Plan, d *plan.DAG, checked error, c config) Report {
	r := &reviewer{p: p, d: d, c: c, catalog: c.catalog != nil || d != nil && d.Catalog() != nil}
	r.run(checked)
	rep := Report{Issues: r.issues}
	if len(p.Tasks) == 0 {
		// Without tasks nothing can run, and every finding is part of why:
		// a key the text held instead of tasks ("taks") is the likeliest
		// cause, and is as critical as the missing tasks.
		for i := range rep.Issues {
			rep.Issues[i].Severity = Critical
		}
	}
	rep.finish()
	if len(p.Tasks) == 0 {
		rep.Score, rep.Summary = 1, NoPlan
	}
	return rep
}

// NoPlan is the summary of a plan without tasks, or of a text from which
// no plan could be read; its score is 1, and every issue of its report is
// critical.
const NoPlan = "No plan could be read from the text; nothing can run."

// ReviewSource parses src as Parse does — raw LLM output included — and
// reviews what it finds. The problems Parse reports (no JSON at all,
// malformed JSON, bad field values) are critical issues of the report, so
// a text that is not a plan yields a report, never an error: one with score
// 1 and the summary [NoPlan].
func ReviewSource(src []byte, opts ...Option) Report {
	c := newConfig(opts)
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
	d, err := p.DAG(c.planOptions()...)
	rep := review(p, d, err, c)
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

// ErrReviewer wraps the error of a [Reviewer] that failed.
var ErrReviewer = errors.New("reviewer failed")

// ReviewWith reviews p statically, then asks rv for more findings and
// merges them into the report. When rv fails, the report still holds every
// static finding and the error matches [ErrReviewer].
func ReviewWith(ctx context.Context, p *plan.Plan, rv Reviewer, opts ...Option) (Report, error) {
	rep := Review(p, opts...)
	if rv == nil || p == nil {
		return rep, nil
	}
	more, err := rv.Review(ctx, p, rep)
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrReviewer, err)
	}
	return Merge(rep, p, more), nil
}

// Merge returns rep with more, a [Reviewer]'s findings on p, merged in
// order: an issue without a severity is an info, one about a task of p
// takes the task's position when it has none, and the score, summary and
// recommendations count them. [ReviewWith] merges so; a host that reviews
// otherwise — [ReviewSource] a text, say — merges with it.
func Merge(rep Report, p *plan.Plan, more []Issue) Report {
	if len(more) == 0 {
		return rep
	}
	index := make(map[string]int)
	if p != nil {
		for i := range p.Tasks {
			if _, dup := index[p.Tasks[i].ID]; !dup {
				index[p.Tasks[i].ID] = i
			}
		}
	}
	rep.Issues = slices.Clone(rep.Issues)
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
	return rep
}
