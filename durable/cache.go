package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// EventPlanCached is the event of a run that starts from a mission when it
// reuses the plan its journal cached for the mission instead of asking the
// planner ([WithPlanCache]): Tasks counts the plan's tasks.
const EventPlanCached runner.EventKind = "mission_plan_cached"

// PlanCache says what a journaled run that starts from a mission does with
// the plans its journal caches ([WithPlanCache]).
type PlanCache int

const (
	// CacheOff neither reads nor writes the cache: the zero value.
	CacheOff PlanCache = iota
	// CacheReuse runs the plan cached for the mission, when there is one,
	// instead of asking the planner, and caches the planner's plan once a
	// run of it completed.
	CacheReuse
	// CacheRefresh always asks the planner, and caches its plan once a
	// run of it completed, replacing what was cached.
	CacheRefresh
)

// cacheFormat is the version of what the cache keys and holds: the
// canonical plan format and the key's recipe. Changing either changes it,
// so that no plan of another format is ever found.
const cacheFormat = 2

// WithPlanCache makes a journaled run that starts from a mission use the
// journal's plan cache ([store.Store.CachedPlan]) as m says. A plan is
// cached under the normalised mission ([NormalizeMission]) and a
// fingerprint of the catalog — its digest ([CatalogFunc]) and the names of
// the [WithAgent] workers — and only once a run of it completed without
// a repair. A cached plan is checked against the catalog and goes through
// the critic's gate ([Spec.Gate]) as a planner's plan does. A catalog that
// names no digest is never cached against: its changes could not be
// told.
func WithPlanCache(m PlanCache) Option {
	return func(c *config) { c.cache = m }
}

// WithMemory shows the planner of a journaled run that starts from a
// mission how the agents, workers and tools fared in the journal's newest
// runs, at most runs of them ([store.Store.Outcomes], [store.Summarize],
// [metaplanner.WithMemory]). 0 shows nothing.
func WithMemory(runs int) Option {
	return func(c *config) { c.memory = max(0, runs) }
}

// NormalizeMission is the mission as the plan cache keys it: its words
// one space apart, so that missions that differ only in spacing share a
// plan. Case is kept: "copy README.md" and "copy readme.md" may name
// different files, and a plan carries the mission's words into its
// inputs.
func NormalizeMission(mission string) string {
	return strings.Join(strings.Fields(mission), " ")
}

// cacheKey is the key of the launch's mission in the plan cache; "" when
// the launch does not cache, or its catalog cannot be fingerprinted.
func (l *launch) cacheKey() string {
	if l.c.cache == CacheOff || l.jr == nil || (l.spec.Catalog != "" && l.spec.CatalogDigest == "") {
		return ""
	}
	h := sha256.New()
	h.Write([]byte("dagent plan cache " + strconv.Itoa(cacheFormat) + "\x00"))
	h.Write([]byte(l.spec.CatalogDigest + "\x00"))
	// Another model, or the brief prompts and schema, write other plans.
	h.Write([]byte(l.spec.LLM.Model + "\x00" + strconv.FormatBool(l.spec.LLM.Brief) + "\x00"))
	for _, name := range slices.Sorted(maps.Keys(l.c.agents)) {
		h.Write([]byte(name + "\x00"))
	}
	h.Write([]byte(NormalizeMission(l.spec.mission())))
	return hex.EncodeToString(h.Sum(nil))
}

// cachedPlan returns the plan cached for the launch's mission; nil when
// there is none to reuse. A cached plan that no longer parses is none.
func (l *launch) cachedPlan(ctx context.Context) (*plan.Plan, error) {
	key := l.cacheKey()
	if key == "" || l.c.cache != CacheReuse {
		return nil, nil
	}
	cached, err := l.jr.s.CachedPlan(ctx, key)
	if errors.Is(err, store.ErrNotCached) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := plan.Parse(cached.Plan)
	if err != nil {
		return nil, nil
	}
	return p, nil
}

// keepPlan caches the planner's plan p once the run of it completed
// without a repair.
func (l *launch) keepPlan(ctx context.Context, p *plan.Plan, out *Outcome) error {
	key := l.cacheKey()
	if key == "" || p == nil || out.Status != StatusCompleted || (out.Execution != nil && out.Execution.ReplanCount > 0) {
		return nil
	}
	canon, err := p.Canonical()
	if err != nil {
		return err
	}
	return l.jr.s.CachePlan(ctx, store.CachedPlan{Key: key, Mission: l.spec.mission(), Plan: canon, RunID: l.runID, Stored: time.Now()})
}

// memory is the summary of the journal's newest runs for the planner; nil
// when the launch shows none.
func (l *launch) memory(ctx context.Context) (*metaplanner.Memory, error) {
	if l.spec.Memory != nil {
		// The run's own, journaled with it: a replay, or a run in rounds
		// resumed, shows the planner what it was shown.
		return l.spec.Memory, nil
	}
	if l.c.memory == 0 || l.jr == nil || l.jr.create == nil {
		// A resumed run's planner is shown what the run's spec kept.
		return nil, nil
	}
	outcomes, err := l.jr.s.Outcomes(ctx, l.c.memory)
	if err != nil {
		return nil, err
	}
	l.spec.Memory = store.Summarize(outcomes)
	return l.spec.Memory, l.jr.keepSpec(l.spec)
}
