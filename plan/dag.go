package plan

import (
	"fmt"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// DAG is the dependency graph of a plan whose structure is valid. Changing
// the plan's tasks after building its DAG invalidates the DAG.
type DAG struct {
	plan   *Plan
	g      *simple.DirectedGraph
	deps   [][]int
	order  []string
	phases [][]string
}

// DAG builds the plan's graph. It checks what building needs — a task at
// all, ids, dependencies, cycles — and returns those problems as a *Error;
// Validate checks the rest.
func (p *Plan) DAG() (*DAG, error) {
	r := newReport(p)
	if len(p.Tasks) == 0 {
		r.add(-1, CodeEmptyPlan, "tasks", "the plan has no tasks")
		return nil, r.err()
	}
	s := analyze(p, r)
	if err := r.err(); err != nil {
		return nil, err
	}
	// Node ids are task indexes and edges run from a dependency to its
	// dependent, the direction work flows. Self edges, on which gonum
	// panics, were refused by analyze.
	g := simple.NewDirectedGraph()
	for i := range p.Tasks {
		g.AddNode(simple.Node(i))
	}
	for i, deps := range s.deps {
		for _, j := range deps {
			g.SetEdge(simple.Edge{F: simple.Node(j), T: simple.Node(i)})
		}
	}
	// With a nil order, ties are broken by node id: source order.
	sorted, err := topo.SortStabilized(g, nil)
	if err != nil {
		return nil, fmt.Errorf("plan: sort tasks: %w", err)
	}
	d := &DAG{plan: p, g: g, deps: s.deps, order: make([]string, len(sorted))}
	level := make([]int, len(p.Tasks))
	levels := 0
	for k, n := range sorted {
		i := int(n.ID())
		d.order[k] = p.Tasks[i].ID
		for _, j := range s.deps[i] {
			level[i] = max(level[i], level[j]+1)
		}
		levels = max(levels, level[i]+1)
	}
	d.phases = make([][]string, levels)
	for i := range p.Tasks {
		d.phases[level[i]] = append(d.phases[level[i]], p.Tasks[i].ID)
	}
	return d, nil
}

// Plan returns the plan the DAG was built from.
func (d *DAG) Plan() *Plan { return d.plan }

// Graph returns the gonum graph: node ids are task indexes in the plan's
// Tasks, and edges run from a dependency to the task that depends on it.
func (d *DAG) Graph() graph.Directed { return d.g }

// Order returns the task ids in a topological order, dependencies first,
// ties broken by source order. The same plan always yields the same order.
func (d *DAG) Order() []string { return d.order }

// Phases returns the task ids by level: a task without dependencies is at
// level 0, any other one level above its highest dependency. Within a phase,
// tasks keep their source order. Every task of a phase can run in parallel
// once the phases before it are settled.
func (d *DAG) Phases() [][]string { return d.phases }

// Edges returns every dependency as [dependency, dependent], by dependent in
// source order, then in the order of its depends_on.
func (d *DAG) Edges() [][2]string {
	var edges [][2]string
	for i, deps := range d.deps {
		for _, j := range deps {
			edges = append(edges, [2]string{d.plan.Tasks[j].ID, d.plan.Tasks[i].ID})
		}
	}
	return edges
}
