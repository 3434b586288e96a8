package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	jschema "github.com/dagent-dev/dagent/internal/schema"
)

// Validate reports every problem of the plan at once as a *Error: an empty
// plan, bad ids, duplicate ids, dependencies on missing tasks or on the task
// itself, cycles, unknown agents, inputs and {{results.ID}} templates that
// name a task that is not upstream, values out of range, an output schema
// that is not a JSON object or does not compile, and the limits.
// Problems come grouped by task, in source order.
//
// An agent is known when the plan defines it, when it is DefaultAgent, or
// when WithWorkers names it; the plan must not define an agent with a
// worker's name. With WithWorkerOutputs, inputs must read declared slots.
func (p *Plan) Validate(opts ...Option) error {
	c := newConfig(opts)
	r := newReport(p)
	if len(p.Tasks) == 0 {
		r.add(-1, CodeEmptyPlan, "tasks", "the plan has no tasks")
		return r.err()
	}
	if exceeds(len(p.Tasks), c.limits.MaxTasks) {
		r.add(-1, CodeTooManyTasks, "tasks", fmt.Sprintf("the plan has %d tasks, over the limit of %d", len(p.Tasks), c.limits.MaxTasks))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Agents)) {
		if c.workers[name] {
			r.add(-1, CodeAgentIsWorker, "agents."+name, fmt.Sprintf("agent %q is defined by the plan and is also a registry worker; rename the plan's agent", name))
		}
	}
	s := analyze(p, r)
	for i := range p.Tasks {
		validateTask(p, i, c, r)
	}
	checkUpstream(p, s, c, r)
	return r.err()
}

func validateTask(p *Plan, i int, c config, r *report) {
	t := &p.Tasks[i]
	if _, defined := p.Agents[t.Agent]; !defined && t.Agent != DefaultAgent && !c.workers[t.Agent] {
		msg := fmt.Sprintf("agent %q is not defined in the plan's agents and is not a registry worker", t.Agent)
		if t.Agent == "" {
			msg = fmt.Sprintf("the task names no agent; use %q or an agent of the plan", DefaultAgent)
		}
		r.add(i, CodeUnknownAgent, "agent", msg)
	}
	if !t.Type.Valid() {
		r.add(i, CodeInvalidType, "type", fmt.Sprintf("unknown task type %q; use task, synthesis_gate or human_review", t.Type))
	}
	if !t.OnFailure.Valid() {
		r.add(i, CodeInvalidOnFailure, "on_failure", fmt.Sprintf("unknown policy %q; use stop, skip, retry or replan", t.OnFailure))
	}
	if !t.OnVerificationFailure.Valid() {
		r.add(i, CodeInvalidOnVerificationFailure, "on_verification_failure", fmt.Sprintf("unknown policy %q; use stop, skip, retry or replan", t.OnVerificationFailure))
	}
	switch {
	case t.MaxRetries < 0:
		r.add(i, CodeInvalidMaxRetries, "max_retries", fmt.Sprintf("max_retries must be a non-negative integer, found %d", t.MaxRetries))
	case exceeds(t.MaxRetries, c.limits.MaxRetries):
		r.add(i, CodeTooManyRetries, "max_retries", fmt.Sprintf("max_retries is %d, over the limit of %d", t.MaxRetries, c.limits.MaxRetries))
	}
	if t.Timeout < 0 {
		r.add(i, CodeInvalidTimeout, "timeout", fmt.Sprintf("timeout %s is negative", t.Timeout))
	}
	if exceeds(len(t.Input), c.limits.MaxInputBytes) {
		r.add(i, CodeInputTooLarge, "input", fmt.Sprintf("input is %d bytes, over the limit of %d", len(t.Input), c.limits.MaxInputBytes))
	}
	if len(t.OutputSchema) > 0 {
		// The agent is sent the schema with every attempt, as it is sent
		// the input: the same limit bounds each.
		tooLarge := exceeds(len(t.OutputSchema), c.limits.MaxInputBytes)
		if tooLarge {
			r.add(i, CodeInputTooLarge, "output_schema", fmt.Sprintf("output_schema is %d bytes, over the limit of %d", len(t.OutputSchema), c.limits.MaxInputBytes))
		}
		if msg := badObject(t.OutputSchema); msg != "" {
			r.add(i, CodeInvalidField, "output_schema", "output_schema "+msg)
		} else if !tooLarge {
			// The runner compiles it before the run starts: a schema that
			// does not compile is a plan that cannot run, told here, where
			// dagent lint sees it.
			if _, err := jschema.Compile(t.OutputSchema); err != nil {
				r.add(i, CodeInvalidField, "output_schema", "output_schema does not compile: "+err.Error())
			}
		}
	}
}

// badObject says what keeps raw from being a JSON object that both
// encoding/json (which writes it) and Parse (which reads it back) accept, or
// returns "". Parse only ever produces such objects; Go code may not.
func badObject(raw []byte) string {
	if !json.Valid(raw) {
		return "is not valid JSON"
	}
	// Valid JSON has nothing but JSON white space around its value.
	n, _, err := readTree(bytes.TrimSpace(raw), 0)
	switch {
	case err != nil:
		return "is not valid JSON: " + err.Error()
	case n.kind != '{':
		return "must be a JSON Schema object, found " + n.kindName()
	}
	return ""
}

// structure is the dependency graph of a plan in task indexes, with the
// edges that cannot be built (self, missing) left out.
type structure struct {
	index map[string]int // id → index of the first task with it
	deps  [][]int        // per task, the tasks it depends on, deduplicated
	// post lists every task after the tasks it depends on, when there is
	// no cycle.
	post []int
}

// analyze checks ids and dependencies, finds cycles, and returns the graph.
func analyze(p *Plan, r *report) *structure {
	s := &structure{index: make(map[string]int, len(p.Tasks)), deps: make([][]int, len(p.Tasks))}
	for i := range p.Tasks {
		id := p.Tasks[i].ID
		if msg := badID(id); msg != "" {
			r.add(i, CodeInvalidID, "id", msg)
		}
		if j, dup := s.index[id]; dup {
			r.add(i, CodeDuplicateID, "id", fmt.Sprintf("id %q is also the id of task %d%s; ids must be unique", id, j+1, at(p.Tasks[j].Pos)))
			continue
		}
		s.index[id] = i
	}
	// One flat backing array keeps the graph to two allocations.
	edges := 0
	for i := range p.Tasks {
		edges += len(p.Tasks[i].DependsOn)
	}
	flat := make([]int, 0, edges)
	for i := range p.Tasks {
		t := &p.Tasks[i]
		begin := len(flat)
		for _, d := range t.DependsOn {
			j, ok := s.index[d]
			switch {
			case d == t.ID:
				r.add(i, CodeSelfDependency, "depends_on", fmt.Sprintf("the task depends on itself (%q)", d))
			case !ok:
				r.add(i, CodeMissingDependency, "depends_on", fmt.Sprintf("depends on %q, which is not a task of the plan%s", d, r.suggest(d)))
			case !slices.Contains(flat[begin:], j):
				flat = append(flat, j)
			}
		}
		s.deps[i] = flat[begin:len(flat):len(flat)]
	}
	comps, post := components(s.deps)
	s.post = post
	for _, cycle := range cycles(s.deps, comps) {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = p.Tasks[i].ID
		}
		r.add(cycle[0], CodeCycle, "depends_on", "dependency cycle: "+strings.Join(names, " -> "))
	}
	return s
}

// checkUpstream checks that inputs and {{results.ID}} templates name tasks
// that are upstream: reachable through depends_on, so their results exist
// when the task runs.
func checkUpstream(p *Plan, s *structure, c config, r *report) {
	up := newUpstream(s.deps)
	isTask := func(id string) bool { _, ok := s.index[id]; return ok }
	// why says what is wrong with a reference from task i to ref, or "".
	why := func(i int, ref string) string {
		j, ok := s.index[ref]
		switch {
		case ref == "":
			return "names no task"
		case !ok:
			return fmt.Sprintf("names %q, which is not a task of the plan%s", ref, r.suggest(ref))
		case j == i:
			return "names the task itself"
		case !up.reaches(i, j):
			return fmt.Sprintf("names %q, which is not upstream; add %q to depends_on", ref, ref)
		}
		return ""
	}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		var bad []string // slots with a bad reference, sorted for a stable report
		for slot, in := range t.Inputs {
			if why(i, in.From) != "" {
				bad = append(bad, slot)
			}
		}
		slices.Sort(bad)
		for _, slot := range bad {
			r.add(i, CodeInputNotUpstream, "inputs."+slot, fmt.Sprintf("input %q %s", slot, why(i, t.Inputs[slot].From)))
		}
		checkSlots(p, s, c, r, i)
		for ref := range ResultRefs(t.Input, isTask) {
			if msg := why(i, ref.Task); msg != "" {
				r.add(i, CodeTemplateNotUpstream, "input", "template "+t.Input[ref.Start:ref.End]+" "+msg)
			}
		}
	}
}

// checkSlots checks that the inputs of task i read slots their upstream
// workers declare, for the workers WithWorkerOutputs describes.
func checkSlots(p *Plan, s *structure, c config, r *report, i int) {
	t := &p.Tasks[i]
	if len(t.Inputs) == 0 || len(c.outputs) == 0 {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(t.Inputs)) {
		in := t.Inputs[name]
		j, ok := s.index[in.From]
		if !ok || in.Slot == "" {
			continue
		}
		worker := p.Tasks[j].Agent
		declared, described := c.outputs[worker]
		slot, _, _ := strings.Cut(in.Slot, ".")
		if !described || slices.Contains(declared, slot) {
			continue
		}
		have := "declares no output slots"
		if len(declared) > 0 {
			have = "declares " + strings.Join(declared, ", ")
		}
		r.add(i, CodeUndeclaredSlot, "inputs."+name, fmt.Sprintf("input %q reads slot %q of %q, but worker %q %s", name, slot, in.From, worker, have))
	}
}

// badID says what is wrong with an id, or returns "".
func badID(id string) string {
	switch {
	case id == "":
		return "the task has an empty id"
	case strings.TrimSpace(id) != id:
		return fmt.Sprintf("id %q has leading or trailing space", id)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fmt.Sprintf("id %q holds control characters", id)
	}
	return ""
}

// suggest names the task a reference most likely meant when it differs only
// in case, spaces or dashes ("Fetch Data" for "fetch_data").
func (r *report) suggest(ref string) string {
	if r.norm == nil {
		r.norm = make(map[string]string, len(r.p.Tasks))
		for i := len(r.p.Tasks) - 1; i >= 0; i-- {
			r.norm[normalizeName(r.p.Tasks[i].ID)] = r.p.Tasks[i].ID
		}
	}
	if id, ok := r.norm[normalizeName(ref)]; ok && id != ref {
		return fmt.Sprintf("; did you mean %q?", id)
	}
	return ""
}

func at(pos Position) string {
	if !pos.IsValid() {
		return ""
	}
	return " at line " + strconv.Itoa(pos.Line)
}

// report collects problems by task so that they come out grouped by task in
// source order, plan-level problems first.
type report struct {
	p      *Plan
	plan   []*Problem
	byTask map[int][]*Problem
	norm   map[string]string // normalised id → id, for suggestions
}

func newReport(p *Plan) *report { return &report{p: p} }

func (r *report) add(i int, code Code, field, msg string) {
	if i < 0 {
		r.plan = append(r.plan, &Problem{Code: code, Field: field, Message: msg})
		return
	}
	if r.byTask == nil {
		r.byTask = make(map[int][]*Problem)
	}
	t := &r.p.Tasks[i]
	// A task without an id is named by its position, so that its problems
	// do not read as the plan's.
	id := cmp.Or(t.ID, "#"+strconv.Itoa(i+1))
	r.byTask[i] = append(r.byTask[i], &Problem{Code: code, TaskID: id, Field: field, Message: msg, Pos: t.Pos})
}

func (r *report) err() error {
	ps := problems(r.plan)
	for _, i := range sortedInts(r.byTask) {
		ps = append(ps, r.byTask[i]...)
	}
	return ps.err()
}

func sortedInts[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
