package runner

import (
	"slices"

	"github.com/dagent-dev/dagent/plan"
)

// graph is what the scheduler needs of a plan's DAG: each task's index,
// direct dependencies and phase. It is derived from the validated plan
// here and nowhere else.
type graph struct {
	index  map[string]int
	deps   [][]int // direct dependencies of each task, without repeats
	phase  []int   // 0 without dependencies, else one above the highest dependency
	phases int
}

// newGraph derives p's graph. p is valid: every dependency names a task,
// and there is no cycle.
func newGraph(p *plan.Plan) graph {
	n := len(p.Tasks)
	g := graph{index: make(map[string]int, n), deps: make([][]int, n), phase: make([]int, n)}
	for i := range p.Tasks {
		g.index[p.Tasks[i].ID] = i
	}
	// One flat array holds every task's dependencies, so that a plan of any
	// size costs a handful of allocations here.
	total := 0
	for i := range p.Tasks {
		total += len(p.Tasks[i].DependsOn)
	}
	flat := make([]int, 0, total)
	for i := range p.Tasks {
		begin := len(flat)
		for _, d := range p.Tasks[i].DependsOn {
			if j := g.index[d]; !slices.Contains(flat[begin:], j) {
				flat = append(flat, j)
			}
		}
		g.deps[i] = flat[begin:len(flat):len(flat)]
	}
	g.levels()
	return g
}

// levels sets every task's phase and the number of phases.
func (g *graph) levels() {
	const unset = -1
	for i := range g.phase {
		g.phase[i] = unset
	}
	var stack []int
	for root := range g.phase {
		if g.phase[root] != unset {
			continue
		}
		stack = append(stack[:0], root)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			level, ready := 0, true
			for _, j := range g.deps[i] {
				if g.phase[j] == unset {
					stack, ready = append(stack, j), false
					break
				}
				level = max(level, g.phase[j]+1)
			}
			if ready {
				g.phase[i] = level
				g.phases = max(g.phases, level+1)
				stack = stack[:len(stack)-1]
			}
		}
	}
}

func (g *graph) has(id string) bool { _, ok := g.index[id]; return ok }

// reads is the set of tasks task i of p waits for: its dependencies plus
// the tasks its templates and inputs name (all upstream of it).
func (g *graph) reads(p *plan.Plan, i int) []int {
	t := &p.Tasks[i]
	out := g.deps[i]
	add := func(id string) {
		if j := g.index[id]; !slices.Contains(out, j) {
			if len(out) == len(g.deps[i]) {
				out = slices.Clone(out)
			}
			out = append(out, j)
		}
	}
	for _, in := range t.Inputs {
		add(in.From)
	}
	for ref := range plan.ResultRefs(t.Input, g.has) {
		add(ref.Task)
	}
	return out
}
