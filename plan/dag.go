package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gonum.org/v1/gonum/graph/topo"

	jschema "github.com/dagent-dev/dagent/internal/schema"
)

// DAG is a checked plan: the plan with its dependency graph in task indexes,
// and what every later stage reads from it — index, dependencies and
// dependents, levels, phases, order, sinks, the result templates of each
// input and the results each task reads — computed once by [Plan.DAG].
//
// A DAG is itself a gonum [graph.Directed] over those arrays: node ids are
// task indexes in the plan's Tasks, and edges run from a dependency to its
// dependent, the direction work flows.
//
// A DAG is immutable and safe for concurrent use. Slices its methods return
// are shared with it: callers must not modify them. Changing the plan's
// tasks after building its DAG invalidates the DAG. There is no useful zero
// DAG: get one from [Plan.DAG].
type DAG struct {
	plan    *Plan
	err     error
	catalog Catalog           // the catalog it was checked against, if any
	schemas []*jschema.Schema // task → its output schema, compiled; nil when no task has one
	index   map[string]int    // id → index of the first task with it
	// nodes holds one node per task, so that the graph hands out nodes
	// without allocating.
	nodes      []taskNode
	deps       csr // task → the tasks it depends on, in depends_on order
	dependents csr // task → the tasks that depend on it, in source order
	reads      csr // task → the tasks whose results it reads
	refStart   []int
	refs       []ResultRef // the templates of task i: refs[refStart[i]:refStart[i+1]]
	level      []int
	order      []string
	phases     [][]string
	sinks      []string
}

// csr is a compressed sparse row list of task indexes: the list of task i
// is items[start[i]:start[i+1]]. Two allocations hold the lists of every
// task.
type csr struct {
	start []int
	items []int
}

func (c *csr) of(i int) []int {
	begin, end := c.start[i], c.start[i+1]
	return c.items[begin:end:end]
}

// DAG checks the plan and returns it checked. err reports every problem
// [Plan.Validate] reports, with the same options and in the same order, as an
// *[Error]; it is nil when the plan may run.
//
// The [DAG] is non-nil whenever the plan's structure is sound — the plan has
// a task, every id is valid and unique, every dependency names another task
// and there is no cycle — even when err reports other problems (an unknown
// agent, a bad policy, a limit, a wiring that does not hold). It is nil when
// the structure is not sound, as there is then no graph. As with an
// [io.Reader] that returns n > 0 with an error, both results carry meaning: a
// linter can walk the phases of a DAG whose plan may not run, while a
// runner must run a DAG only when err is nil. [DAG.Err] returns the same
// err, so that a stage handed a DAG knows whether it may run it.
func (p *Plan) DAG(opts ...Option) (*DAG, error) {
	c := newConfig(opts)
	r := newReport(p)
	if len(p.Tasks) == 0 {
		r.add(-1, CodeEmptyPlan, "tasks", "the plan has no tasks")
		return nil, r.err()
	}
	if exceeds(len(p.Tasks), c.limits.MaxTasks) {
		r.add(-1, CodeTooManyTasks, "tasks", fmt.Sprintf("the plan has %d tasks, over the limit of %d", len(p.Tasks), c.limits.MaxTasks))
	}
	agents := slices.Sorted(maps.Keys(p.Agents))
	for _, name := range agents {
		if _, _, ok := c.worker(name); ok {
			r.add(-1, CodeAgentIsWorker, "agents."+name, fmt.Sprintf("agent %q is defined by the plan and is also a registry worker; rename the plan's agent", name))
		}
	}
	if c.catalog != nil {
		for _, name := range agents {
			for _, tool := range p.Agents[name].Tools {
				if !c.catalog.HasTool(tool) {
					r.add(-1, CodeUnknownTool, "agents."+name+".tools", fmt.Sprintf("agent %q uses tool %q, which the host's catalog does not have", name, tool))
				}
			}
		}
	}
	d, sound := build(p, &c, r)
	for i := range p.Tasks {
		if s := validateTask(p, i, &c, r); s != nil {
			if d.schemas == nil {
				d.schemas = make([]*jschema.Schema, len(p.Tasks))
			}
			d.schemas[i] = s
		}
	}
	d.wire(&c, r)
	d.err = r.err()
	d.catalog = c.catalog
	if !sound {
		return nil, d.err
	}
	return d, d.err
}

// build checks ids and dependencies, finds cycles and, when the structure
// is sound, settles levels, phases, order and sinks.
func build(p *Plan, c *config, r *report) (d *DAG, sound bool) {
	n := len(p.Tasks)
	d = &DAG{plan: p, index: make(map[string]int, n), nodes: make([]taskNode, n)}
	sound = true
	for i := range p.Tasks {
		d.nodes[i].id = int64(i)
		id := p.Tasks[i].ID
		if msg := badID(id, c.limits.MaxIDBytes); msg != "" {
			r.add(i, CodeInvalidID, "id", msg)
			sound = false
		}
		if j, dup := d.index[id]; dup {
			r.add(i, CodeDuplicateID, "id", fmt.Sprintf("id %q is also the id of task %d%s; ids must be unique", id, j+1, at(p.Tasks[j].Pos)))
			sound = false
			continue
		}
		d.index[id] = i
	}
	edges := 0
	for i := range p.Tasks {
		edges += len(p.Tasks[i].DependsOn)
	}
	d.deps = csr{start: make([]int, n+1), items: make([]int, 0, edges)}
	outs := make([]int, n+1) // dependents of each task, counted, then their starts
	for i := range p.Tasks {
		t := &p.Tasks[i]
		begin := len(d.deps.items)
		for _, dep := range t.DependsOn {
			j, ok := d.index[dep]
			switch {
			case dep == t.ID:
				r.add(i, CodeSelfDependency, "depends_on", fmt.Sprintf("the task depends on itself (%q)", dep))
				sound = false
			case !ok:
				r.add(i, CodeMissingDependency, "depends_on", fmt.Sprintf("depends on %q, which is not a task of the plan%s", dep, r.suggest(dep)))
				sound = false
			case !slices.Contains(d.deps.items[begin:], j):
				d.deps.items = append(d.deps.items, j)
				outs[j+1]++
			}
		}
		d.deps.start[i+1] = len(d.deps.items)
	}
	for i := range n {
		outs[i+1] += outs[i]
	}
	d.dependents = csr{start: outs, items: make([]int, len(d.deps.items))}
	fill := slices.Clone(outs[:n])
	for i := range n {
		for _, j := range d.deps.of(i) {
			d.dependents.items[fill[j]] = i
			fill[j]++
		}
	}

	// Peeling the tasks whose dependencies are settled (Kahn's algorithm)
	// orders an acyclic graph and settles each task's level on the way, in
	// linear time and without a map. What it cannot peel is on a cycle or
	// downstream of one: only then are the strongly connected components
	// needed, for the cycle messages.
	d.level = make([]int, n)
	waiting := make([]int, n) // dependencies not yet peeled
	peeled := make([]int, 0, n)
	for i := range n {
		waiting[i] = len(d.deps.of(i))
		if waiting[i] == 0 {
			peeled = append(peeled, i)
		}
	}
	levels := 0
	for k := 0; k < len(peeled); k++ {
		i := peeled[k]
		levels = max(levels, d.level[i]+1)
		for _, j := range d.dependents.of(i) {
			d.level[j] = max(d.level[j], d.level[i]+1)
			if waiting[j]--; waiting[j] == 0 {
				peeled = append(peeled, j)
			}
		}
	}
	if len(peeled) < n {
		var comps [][]int
		for _, scc := range topo.TarjanSCC(d) {
			if len(scc) > 1 {
				comp := make([]int, len(scc))
				for k, v := range scc {
					comp[k] = int(v.ID())
				}
				comps = append(comps, comp)
			}
		}
		for _, cycle := range cycles(d, comps) {
			names := make([]string, len(cycle))
			for k, i := range cycle {
				names[k] = p.Tasks[i].ID
			}
			r.add(cycle[0], CodeCycle, "depends_on", "dependency cycle: "+strings.Join(names, " -> "))
		}
		sound = false
	}
	if !sound {
		return d, false
	}
	sizes := make([]int, levels)
	for _, l := range d.level {
		sizes[l]++
	}
	// One backing array holds the order and, sliced, every phase.
	d.order = make([]string, n)
	d.phases = make([][]string, levels)
	begin := 0
	for l, size := range sizes {
		d.phases[l] = d.order[begin : begin : begin+size]
		begin += size
	}
	for i := range p.Tasks {
		l := d.level[i]
		d.phases[l] = append(d.phases[l], p.Tasks[i].ID)
		if len(d.dependents.of(i)) == 0 {
			d.sinks = append(d.sinks, p.Tasks[i].ID)
		}
	}
	return d, true
}

// wire checks that inputs and {{results.ID}} templates name tasks that are
// upstream — reachable through depends_on, so that their results exist when
// the task runs — and read declared slots; it records each task's templates
// and the tasks whose results it reads.
func (d *DAG) wire(c *config, r *report) {
	p := d.plan
	n := len(p.Tasks)
	up := newUpstream(d)
	isTask := func(id string) bool { _, ok := d.index[id]; return ok }
	// why says what is wrong with a reference from task i to ref, or "".
	why := func(i int, ref string) string {
		j, ok := d.index[ref]
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
	var slots []string // one task's input slots, the buffer reused
	d.refStart = make([]int, n+1)
	d.reads = csr{start: make([]int, n+1), items: make([]int, 0, len(d.deps.items))}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		begin := len(d.reads.items)
		d.reads.items = append(d.reads.items, d.deps.of(i)...)
		read := func(id string) {
			if j, ok := d.index[id]; ok && j != i && !slices.Contains(d.reads.items[begin:], j) {
				d.reads.items = append(d.reads.items, j)
			}
		}
		slots = slots[:0] // sorted, for a stable report
		for slot := range t.Inputs {
			slots = append(slots, slot)
		}
		slices.Sort(slots)
		for _, slot := range slots {
			from := t.Inputs[slot].From
			if msg := why(i, from); msg != "" {
				r.add(i, CodeInputNotUpstream, "inputs."+slot, fmt.Sprintf("input %q %s", slot, msg))
			}
			read(from)
		}
		d.checkSlots(c, r, i, slots)
		for ref := range ResultRefs(t.Input, isTask) {
			d.refs = append(d.refs, ref)
			if msg := why(i, ref.Task); msg != "" {
				r.add(i, CodeTemplateNotUpstream, "input", "template "+t.Input[ref.Start:ref.End]+" "+msg)
			}
			read(ref.Task)
		}
		d.refStart[i+1] = len(d.refs)
		d.reads.start[i+1] = len(d.reads.items)
	}
}

// checkSlots checks that the inputs of task i, by sorted slot name, read
// slots their upstream workers declare, for the workers whose outputs the
// options describe.
func (d *DAG) checkSlots(c *config, r *report, i int, names []string) {
	t := &d.plan.Tasks[i]
	for _, name := range names {
		in := t.Inputs[name]
		j, ok := d.index[in.From]
		if !ok || in.Slot == "" {
			continue
		}
		worker := d.plan.Tasks[j].Agent
		declared, described, _ := c.worker(worker)
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

// Err returns the error [Plan.DAG] returned with d: nil when the plan may
// run, else the *[Error] listing every problem.
func (d *DAG) Err() error { return d.err }

// Validator checks a value against a compiled JSON Schema; the error of
// Validate lists every problem, by location in the value.
type Validator interface {
	Validate(v any) error
}

// OutputValidator returns task i's output_schema, compiled during the
// check, or nil when the task has none (or has one that does not compile,
// a problem of the check). A value to check is JSON-shaped: what
// encoding/json decodes into any, numbers as float64 or [json.Number].
func (d *DAG) OutputValidator(i int) Validator {
	if d.schemas == nil || d.schemas[i] == nil {
		return nil
	}
	return d.schemas[i]
}

// Catalog returns the catalog the plan was checked against ([WithCatalog]),
// or nil.
func (d *DAG) Catalog() Catalog { return d.catalog }

// Plan returns the plan the DAG was built from.
func (d *DAG) Plan() *Plan { return d.plan }

// Len returns the number of tasks.
func (d *DAG) Len() int { return len(d.nodes) }

// Task returns task i of the plan, by index in its Tasks. It panics if i is
// out of range, as indexing a slice does; so do the other methods that take
// a task index.
func (d *DAG) Task(i int) *Task { return &d.plan.Tasks[i] }

// Index returns the index of the task with the id, and whether there is one.
func (d *DAG) Index(id string) (int, bool) {
	i, ok := d.index[id]
	return i, ok
}

// Deps returns the indexes of the tasks task i depends on directly, in
// depends_on order, each once.
func (d *DAG) Deps(i int) []int { return d.deps.of(i) }

// Dependents returns the indexes of the tasks that depend directly on task
// i, in source order.
func (d *DAG) Dependents(i int) []int { return d.dependents.of(i) }

// Reads returns the indexes of the tasks whose results task i reads, each
// once: its dependencies in depends_on order, then the other tasks its
// inputs (by slot name) and its templates (in input order) name. When Err
// is nil they are all upstream of task i; a runner starts task i once they
// have settled.
func (d *DAG) Reads(i int) []int { return d.reads.of(i) }

// Refs returns the {{results.ID.path}} templates of task i's input, in
// input order, split as [ResultRefs] splits them against the plan's ids.
func (d *DAG) Refs(i int) []ResultRef {
	begin, end := d.refStart[i], d.refStart[i+1]
	return d.refs[begin:end:end]
}

// Level returns the phase of task i: 0 for a task without dependencies,
// else one above its highest dependency.
func (d *DAG) Level(i int) int { return d.level[i] }

// Order returns the task ids in a topological order, dependencies first:
// phase by phase, in source order within a phase. The same plan always
// yields the same order.
func (d *DAG) Order() []string { return d.order }

// Phases returns the task ids by level: a task without dependencies is at
// level 0, any other one level above its highest dependency. Within a phase,
// tasks keep their source order. Every task of a phase can run in parallel
// once the phases before it are settled.
func (d *DAG) Phases() [][]string { return d.phases }

// Sinks returns the ids of the tasks nothing depends on, in source order:
// the plan's final results.
func (d *DAG) Sinks() []string { return d.sinks }

// Edges returns every dependency as [dependency, dependent], by dependent in
// source order, then in the order of its depends_on. The slice is new on
// every call.
func (d *DAG) Edges() [][2]string {
	var edges [][2]string
	for i := range d.nodes {
		for _, j := range d.deps.of(i) {
			edges = append(edges, [2]string{d.plan.Tasks[j].ID, d.plan.Tasks[i].ID})
		}
	}
	return edges
}
