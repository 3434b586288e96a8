package plan

import (
	"slices"
)

// cycles returns one dependency cycle per strongly connected component of
// more than one task, as task indexes in depends-on order, the first task
// repeated at the end: [a b a] means a depends on b and b on a. Each cycle
// starts at its component's first task in source order and is the shortest
// way back to it, so the same plan always yields the same text.
func cycles(d *DAG, comps [][]int) [][]int {
	var out [][]int
	for _, comp := range comps {
		out = append(out, shortestCycle(d, comp))
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// shortestCycle finds, by breadth-first search inside the component, the
// shortest cycle through the component's first node.
func shortestCycle(d *DAG, comp []int) []int {
	in := make(map[int]bool, len(comp))
	for _, v := range comp {
		in[v] = true
	}
	start := slices.Min(comp)
	parent := map[int]int{start: -1}
	queue := []int{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, w := range d.deps.of(u) {
			if w == start {
				path := []int{start}
				for v := u; v != start; v = parent[v] {
					path = append(path, v)
				}
				slices.Reverse(path[1:])
				return append(path, start)
			}
			if _, seen := parent[w]; in[w] && !seen {
				parent[w] = u
				queue = append(queue, w)
			}
		}
	}
	return []int{start, start} // unreachable: a component is strongly connected
}

// upstream answers "does task i (transitively) depend on task j?".
type upstream struct {
	dag   *DAG
	seen  []int // stamp of the query that last visited each task
	stamp int
	stack []int
}

func newUpstream(d *DAG) *upstream { return &upstream{dag: d} }

func (u *upstream) reaches(from, to int) bool {
	if slices.Contains(u.dag.deps.of(from), to) {
		return true
	}
	if u.seen == nil {
		u.seen = make([]int, len(u.dag.nodes))
	}
	u.stamp++
	u.stack = append(u.stack[:0], from)
	u.seen[from] = u.stamp
	for len(u.stack) > 0 {
		v := u.stack[len(u.stack)-1]
		u.stack = u.stack[:len(u.stack)-1]
		for _, w := range u.dag.deps.of(v) {
			if w == to {
				return true
			}
			if u.seen[w] != u.stamp {
				u.seen[w] = u.stamp
				u.stack = append(u.stack, w)
			}
		}
	}
	return false
}
