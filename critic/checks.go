package critic

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/sync/errgroup"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

// Checks of this package. Structural problems keep their plan validation
// code as their check (cycle, duplicate_id, missing_dependency, ...).
const (
	CheckMissingGate        = "missing_gate"
	CheckParallelExplosion  = "parallel_explosion"
	CheckOptimismBias       = "optimism_bias"
	CheckOrphanTask         = "orphan_task"
	CheckDisconnectedFlow   = "disconnected_flow"
	CheckInvalidPredicate   = "invalid_predicate"
	CheckPredicateNever     = "predicate_never_passes"
	CheckUnknownTool        = "unknown_tool"
	CheckUnknownWorker      = "unknown_worker"
	CheckRetryWithoutBudget = "retry_without_budget"
	CheckGateWithoutInputs  = "gate_without_inputs"
	CheckUnknownKey         = "unknown_key"
	CheckMissingProgram     = "missing_program"
	CheckNonblockingReview  = "nonblocking_review"
)

// Thresholds of the phase checks.
const (
	// WideningPhase is the phase width from which a synthesis gate should
	// follow (missing_gate).
	WideningPhase = 3
	// MaxParallel is the widest phase that is not an explosion.
	MaxParallel = 10
)

// flaky lists the words that name an operation that fails now and then,
// whatever their neighbours.
var flaky = map[string]bool{
	"search": true, "searches": true, "searching": true, "searched": true,
	"fetch": true, "fetches": true, "fetching": true, "fetched": true,
	"api": true, "apis": true, "http": true, "https": true,
}

// Words that name a flaky operation only beside the right neighbour: a
// "web search" is one, a "web of relationships" is not; an "HTTP request"
// is one, a "polite request" is not.
var (
	// web: the word after it makes it an operation.
	webThings = set(words("search searches page pages site sites service services api apis request requests server servers content results sources"))
	// request: the word before it (after a determiner) makes it one.
	requestKinds = set(words("http https api web network remote rest get post put delete graphql rpc ajax send sends sending make makes making issue issues"))
	// query: the word after it, a determiner, makes it a verb on something;
	// the word before it, a remote kind of query.
	queryObjects = set(words("the a an each every all its their our"))
	queryKinds   = set(words("api web network remote dns graphql"))
	// external: the word after it names something across a network.
	externalThings = set(words("api apis service services server servers source sources system systems endpoint endpoints site sites website websites data call calls tool tools resource resources provider providers"))
	// search: the word before it names an algorithm, not a lookup; search
	// results are what a search found, not a search.
	searchAlgorithms = set(words("binary linear sequential exhaustive depth breadth tree graph local"))
	determiners      = set(words("a an the"))
)

// set turns a word list into a set.
func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// flakyCue returns the first word of ws that names an operation that fails
// now and then, by itself or with its neighbours, or "".
func flakyCue(ws []string) string {
	at := func(k int) string {
		if k < 0 || k >= len(ws) {
			return ""
		}
		return ws[k]
	}
	// before is the word before k, past one determiner.
	before := func(k int) string {
		if determiners[at(k-1)] {
			return at(k - 2)
		}
		return at(k - 1)
	}
	for k, w := range ws {
		switch {
		case strings.HasPrefix(w, "search") && (searchAlgorithms[at(k-1)] || at(k+1) == "results"):
		case flaky[w]:
			return w
		case w == "web" && webThings[at(k+1)],
			(w == "request" || w == "requests" || w == "requesting") && requestKinds[before(k)],
			(w == "query" || w == "queries" || w == "querying" || w == "queried") && (queryObjects[at(k+1)] || queryKinds[at(k-1)]),
			w == "external" && externalThings[at(k+1)]:
			return w
		}
	}
	return ""
}

// reviewer holds one review's state.
type reviewer struct {
	p       *plan.Plan
	d       *plan.DAG // nil when the plan's structure is not sound
	c       config
	catalog bool                           // workers were checked against a catalog
	checked map[string][]verify.Diagnostic // per predicate, what checking it found
	issues  []Issue
	index   map[string]int // when d is nil: id → the first task with it
}

// task returns the index of the first task with id: the DAG's index, or
// the review's own for a plan whose structure is not sound.
func (r *reviewer) task(id string) (int, bool) {
	if r.d != nil {
		return r.d.Index(id)
	}
	i, ok := r.index[id]
	return i, ok
}

func (r *reviewer) add(task int, check string, sev Severity, field, msg string) {
	is := Issue{Check: check, Severity: sev, Field: field, Message: msg, Recommendation: fix(check), order: task}
	if task >= 0 {
		is.TaskID, is.Pos = r.p.Tasks[task].ID, r.p.Tasks[task].Pos
	}
	r.issues = append(r.issues, is)
}

// run reviews the plan; checked is the error of checking it.
func (r *reviewer) run(checked error) {
	r.buildIndex()
	r.structure(checked)
	r.unknownKeys()
	r.compilePredicates()
	r.programs()
	for i := range r.p.Tasks {
		r.predicates(i)
		r.budget(i)
		r.gateInputs(i)
		r.optimism(i)
		r.flow(i)
	}
	// The phase checks need a graph, which a plan with missing
	// dependencies or cycles does not have; those are critical already.
	if r.d != nil {
		r.phases()
		r.reviews()
	}
}

// reviews flags a human review whose rejection does not stop what depends
// on it: a rejected review that is not critical, or whose on_failure is
// skip, is skipped, and its dependents run as if it had been approved.
func (r *reviewer) reviews() {
	for i := range r.p.Tasks {
		t := &r.p.Tasks[i]
		if t.Type != plan.TypeHumanReview || t.OnFailure == plan.PolicyReplan {
			continue
		}
		why := "is not critical"
		switch {
		case t.OnFailure == plan.PolicySkip:
			why = "has on_failure skip"
		case t.Critical:
			continue
		}
		deps := r.d.Dependents(i)
		if len(deps) == 0 {
			continue
		}
		ids := make([]string, len(deps))
		for k, j := range deps {
			ids[k] = r.p.Tasks[j].ID
		}
		field := "critical"
		if t.OnFailure == plan.PolicySkip {
			field = "on_failure"
		}
		r.add(i, CheckNonblockingReview, Warning, field,
			fmt.Sprintf("the review %s, so a rejection skips it and what depends on it (%s) runs anyway", why, list(ids)))
	}
}

// programChecker is a catalog that can tell whether a worker's program
// can be started on this machine; a *registry.Registry is one.
type programChecker interface {
	CheckProgram(worker string) error
}

// programs warns of tasks whose worker's program cannot be started here:
// the run would fail every such task.
func (r *reviewer) programs() {
	cat := r.c.catalog
	if cat == nil && r.d != nil {
		cat = r.d.Catalog()
	}
	pc, ok := cat.(programChecker)
	if !ok {
		return
	}
	checked := make(map[string]error)
	for i := range r.p.Tasks {
		name := r.p.Tasks[i].Agent
		if _, defined := r.p.Agents[name]; defined || name == "" {
			continue
		}
		err, seen := checked[name]
		if !seen {
			err = pc.CheckProgram(name)
			checked[name] = err
		}
		if err != nil {
			r.add(i, CheckMissingProgram, Warning, "agent", err.Error())
		}
	}
}

// buildIndex maps ids to the first task with each, for a plan that has no
// DAG to read its index from.
func (r *reviewer) buildIndex() {
	if r.d != nil {
		return
	}
	r.index = make(map[string]int, len(r.p.Tasks))
	for i := range r.p.Tasks {
		if _, dup := r.index[r.p.Tasks[i].ID]; !dup {
			r.index[r.p.Tasks[i].ID] = i
		}
	}
}

// structure turns the problems of checking the plan into critical issues.
func (r *reviewer) structure(checked error) {
	for _, prob := range plan.Problems(checked) {
		is := problemIssue(r.p, prob)
		if prob.Code == plan.CodeUnknownAgent && r.catalog {
			is.Check = CheckUnknownWorker
			is.Recommendation = fix(CheckUnknownWorker)
		}
		r.issues = append(r.issues, is)
	}
}

// problemIssue is the critical issue of a plan problem.
func problemIssue(p *plan.Plan, prob *plan.Problem) Issue {
	is := Issue{Check: string(prob.Code), Severity: Critical, TaskID: prob.TaskID, Field: prob.Field, Message: prob.Message, Recommendation: fix(string(prob.Code)), Pos: prob.Pos, order: -1}
	if p != nil && prob.TaskID != "" {
		is.order = taskAt(p, prob.TaskID, prob.Pos)
	}
	return is
}

// taskAt is the index of the task named id that a finding at pos is
// about, or -1. Ids may repeat (duplicate_id), so among the tasks with the
// id it takes the last that starts at or before pos; a task without an id
// is named "#N" by its position.
func taskAt(p *plan.Plan, id string, pos plan.Position) int {
	found := -1
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if t.ID != id {
			continue
		}
		if found < 0 || pos.IsValid() && t.Pos.IsValid() && !before(pos, t.Pos) {
			found = i
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(id, "#")); found < 0 && err == nil && strings.HasPrefix(id, "#") && n >= 1 && n <= len(p.Tasks) && p.Tasks[n-1].ID == "" {
		found = n - 1
	}
	return found
}

// before reports whether a comes before b in the source.
func before(a, b plan.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}

// unknownKeys warns of keys Parse dropped: a misspelled key silently
// loses its meaning.
func (r *reviewer) unknownKeys() {
	for _, u := range r.p.Unknown {
		i := -1
		if u.TaskID != "" {
			// A key of the second of two tasks with one id is the second's.
			i = taskAt(r.p, u.TaskID, u.Pos)
		}
		r.add(i, CheckUnknownKey, Warning, u.Key, u.Message())
		r.issues[len(r.issues)-1].Pos = u.Pos
	}
}

// compilePredicates compiles every distinct predicate of the plan into the
// review's set, on all cores: compiling is most of a review's work when
// LLMs write a different predicate for every task.
func (r *reviewer) compilePredicates() {
	var srcs []string
	for i := range r.p.Tasks {
		t := &r.p.Tasks[i]
		if t.When != "" {
			srcs = append(srcs, t.When)
		}
		if t.Verification != "" {
			srcs = append(srcs, t.Verification)
		}
	}
	if r.c.predicates != nil {
		r.c.predicates.CompileAll(srcs)
		return
	}
	r.checked = make(map[string][]verify.Diagnostic)
	var distinct []string
	for _, src := range srcs {
		if _, ok := r.checked[src]; !ok {
			r.checked[src] = nil
			distinct = append(distinct, src)
		}
	}
	diags := make([][]verify.Diagnostic, len(distinct))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k, src := range distinct {
		g.Go(func() error {
			diags[k] = verify.Check(src)
			return nil
		})
	}
	_ = g.Wait() // the goroutines return no error
	for k, src := range distinct {
		r.checked[src] = diags[k]
	}
}

// predicates reports what checking the task's condition and verification
// found.
func (r *reviewer) predicates(i int) {
	t := &r.p.Tasks[i]
	r.predicate(i, "when", t.When, "the condition does not compile", "the condition can never hold, so the task never runs")
	r.predicate(i, "verification", t.Verification, "the predicate does not compile", "the predicate can never pass")
}

// predicate reports what checking src, the predicate of the task's field,
// found, each finding after the words that say what it means.
func (r *reviewer) predicate(i int, field, src, invalid, never string) {
	if src == "" {
		return
	}
	diags := r.checked[src]
	if r.c.predicates != nil {
		diags = r.c.predicates.Check(src)
	}
	for _, d := range diags {
		if d.Severity == verify.SeverityError {
			r.add(i, CheckInvalidPredicate, Critical, field, fmt.Sprintf("%s: %s: %s", invalid, d.Pos, d.Message))
		} else {
			r.add(i, CheckPredicateNever, Warning, field, fmt.Sprintf("%s: %s: %s", never, d.Pos, d.Message))
		}
	}
}

// budget warns of a retry policy with no retries.
func (r *reviewer) budget(i int) {
	t := &r.p.Tasks[i]
	if t.MaxRetries != 0 {
		return
	}
	// A rubric is judged only by a run with a judge; a plan that has one
	// is written for such runs.
	judged := t.Verification != "" || t.Rubric != "" || t.Type == plan.TypeSynthesisGate
	switch {
	case t.OnFailure == plan.PolicyRetry:
		r.add(i, CheckRetryWithoutBudget, Warning, "on_failure", "on_failure is retry, but max_retries is 0: the task never retries")
	case t.OnVerificationFailure == plan.PolicyRetry && judged:
		r.add(i, CheckRetryWithoutBudget, Warning, "on_verification_failure", "on_verification_failure is retry, but max_retries is 0: the task never retries")
	}
}

// gateInputs flags a synthesis gate with nothing to synthesize.
func (r *reviewer) gateInputs(i int) {
	t := &r.p.Tasks[i]
	if t.Type == plan.TypeSynthesisGate && len(t.DependsOn) == 0 {
		r.add(i, CheckGateWithoutInputs, Warning, "depends_on", "the synthesis gate has no dependencies, so it has nothing to synthesize")
	}
}

// optimism flags a critical stop on an operation that fails now and then.
func (r *reviewer) optimism(i int) {
	t := &r.p.Tasks[i]
	if !t.Critical || t.OnFailure != plan.PolicyStop || t.Type == plan.TypeHumanReview {
		return
	}
	// Templates name other tasks' results, not operations.
	isTask := func(id string) bool { _, ok := r.task(id); return ok }
	text := t.Input
	for ref := range plan.ResultRefs(t.Input, isTask) {
		text = strings.Replace(text, t.Input[ref.Start:ref.End], " ", 1)
	}
	if w := flakyCue(words(text)); w != "" {
		r.add(i, CheckOptimismBias, Warning, "on_failure",
			fmt.Sprintf("the task's input describes a flaky operation (%q), yet one failure halts the run", w))
	}
}

// words splits s into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// flow checks that a task uses what it depends on: in a template, through
// inputs wiring, by naming it in its input, or in its when condition,
// which reads its dependencies' results by id. Gates and reviews receive
// every dependency's output by definition, and a dependency on a human
// review is a wait for its approval, not a use of its output.
func (r *reviewer) flow(i int) {
	t := &r.p.Tasks[i]
	if t.Type != plan.TypeTask || len(t.DependsOn) == 0 {
		return
	}
	used := make(map[string]bool, len(t.DependsOn))
	if r.d != nil {
		for _, ref := range r.d.Refs(i) {
			used[ref.Task] = true
		}
	} else {
		isTask := func(id string) bool { _, ok := r.task(id); return ok }
		for ref := range plan.ResultRefs(t.Input, isTask) {
			used[ref.Task] = true
		}
	}
	for _, in := range t.Inputs {
		used[in.From] = true
	}
	// Reviews are waited for, not used; missing dependencies and the task
	// itself are critical problems of their own.
	deps, exempt := dedupe(t.DependsOn), 0
	for _, d := range deps {
		if j, ok := r.task(d); !ok || d == t.ID || r.p.Tasks[j].Type == plan.TypeHumanReview {
			used[d] = true
			exempt++
		}
	}
	var unused []string
	for _, d := range t.DependsOn {
		if !used[d] && !names(t.Input, d) && !names(t.When, d) && !slices.Contains(unused, d) {
			unused = append(unused, d)
		}
	}
	switch {
	case len(unused) == 0:
	case len(unused) == len(deps)-exempt:
		r.add(i, CheckDisconnectedFlow, Warning, "depends_on",
			fmt.Sprintf("the input uses none of the task's dependencies (%s)", strings.Join(unused, ", ")))
	default:
		r.add(i, CheckDisconnectedFlow, Info, "depends_on",
			fmt.Sprintf("the input uses some of the task's dependencies, but not %s", strings.Join(unused, ", ")))
	}
}

func dedupe(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// names reports whether text names id as a word of its own.
func names(text, id string) bool {
	if id == "" {
		return false
	}
	lower, want := strings.ToLower(text), strings.ToLower(id)
	for off := 0; ; {
		k := strings.Index(lower[off:], want)
		if k < 0 {
			return false
		}
		start, end := off+k, off+k+len(want)
		if !wordByte(lower, start-1) && !wordByte(lower, end) {
			return true
		}
		off = start + 1
	}
}

// wordByte reports whether s[i] exists and continues an identifier.
func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// phases checks the width of the phases and the tasks nothing uses.
func (r *reviewer) phases() {
	phases := r.d.Phases()
	gateAfter := make([]bool, len(phases)) // a gate in a phase after k
	for k := len(phases) - 2; k >= 0; k-- {
		gateAfter[k] = gateAfter[k+1] || slices.ContainsFunc(phases[k+1], func(id string) bool {
			i, _ := r.d.Index(id)
			return r.p.Tasks[i].Type == plan.TypeSynthesisGate
		})
	}
	for k, phase := range phases {
		first, _ := r.d.Index(phase[0])
		if len(phase) > MaxParallel {
			r.add(first, CheckParallelExplosion, Warning, "",
				fmt.Sprintf("phase %d runs %d tasks in parallel, more than %d", k, len(phase), MaxParallel))
		}
		if len(phase) >= WideningPhase && !gateAfter[k] {
			r.add(first, CheckMissingGate, Warning, "",
				fmt.Sprintf("phase %d runs %d tasks in parallel (%s) and no synthesis gate follows", k, len(phase), list(phase)))
		}
	}
	if len(r.p.Tasks) < 2 {
		return
	}
	last := len(phases) - 1
	for k, phase := range phases[:last] {
		for _, id := range phase {
			if i, _ := r.d.Index(id); len(r.d.Dependents(i)) == 0 {
				r.add(i, CheckOrphanTask, Info, "",
					fmt.Sprintf("nothing depends on the task, yet it runs in phase %d, before the last phase %d: its result is never used", k, last))
			}
		}
	}
}

// list names up to five ids.
func list(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
}
