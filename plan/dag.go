package plan

import (
	"sync"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
)

// DAG is the dependency graph of a plan whose structure is valid. Changing
// the plan's tasks after building its DAG invalidates the DAG.
type DAG struct {
	plan   *Plan
	deps   [][]int
	order  []string
	phases [][]string

	graphOnce sync.Once
	graph     *simple.DirectedGraph
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
	// s.post has every task after its dependencies, so one pass settles
	// each task's level.
	level := make([]int, len(p.Tasks))
	levels := 0
	for _, i := range s.post {
		for _, j := range s.deps[i] {
			level[i] = max(level[i], level[j]+1)
		}
		levels = max(levels, level[i]+1)
	}
	sizes := make([]int, levels)
	for _, l := range level {
		sizes[l]++
	}
	d := &DAG{plan: p, deps: s.deps, order: make([]string, 0, len(p.Tasks)), phases: make([][]string, levels)}
	for l, n := range sizes {
		d.phases[l] = make([]string, 0, n)
	}
	for i := range p.Tasks {
		d.phases[level[i]] = append(d.phases[level[i]], p.Tasks[i].ID)
	}
	for _, phase := range d.phases {
		d.order = append(d.order, phase...)
	}
	return d, nil
}

// Plan returns the plan the DAG was built from.
func (d *DAG) Plan() *Plan { return d.plan }

// Graph returns the plan as a gonum directed graph, for gonum's algorithms:
// node ids are task indexes in the plan's Tasks, and edges run from a
// dependency to the task that depends on it, the direction work flows. It
// is built on first use and is safe for concurrent use.
func (d *DAG) Graph() graph.Directed {
	d.graphOnce.Do(func() {
		g := simple.NewDirectedGraph()
		for i := range d.deps {
			g.AddNode(simple.Node(i))
		}
		// analyze refused self dependencies, on which gonum panics.
		for i, deps := range d.deps {
			for _, j := range deps {
				g.SetEdge(simple.Edge{F: simple.Node(j), T: simple.Node(i)})
			}
		}
		d.graph = g
	})
	return d.graph
}

// Order returns the task ids in a topological order, dependencies first:
// phase by phase, in source order within a phase. The same plan always
// yields the same order.
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
