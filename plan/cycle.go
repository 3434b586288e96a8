package plan

import (
	"slices"
)

// cycles returns one dependency cycle per strongly connected component of
// more than one task, as task indexes in depends-on order, the first task
// repeated at the end: [a b a] means a depends on b and b on a. Each cycle
// starts at its component's first task in source order and is the shortest
// way back to it, so the same plan always yields the same text.
func cycles(deps [][]int, comps [][]int) [][]int {
	var out [][]int
	for _, comp := range comps {
		out = append(out, shortestCycle(deps, comp))
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// components returns the strongly connected components of more than one
// node (Tarjan's algorithm, iterative so that a long chain cannot exhaust
// the stack), and every node in the order its component completed. With
// edges from a task to its dependencies, that order puts dependencies first:
// on an acyclic graph it is a topological order.
func components(adj [][]int) (comps [][]int, post []int) {
	n := len(adj)
	index := make([]int, n) // 0: not yet visited
	low := make([]int, n)
	onStack := make([]bool, n)
	var (
		stack   []int
		counter int
	)
	post = make([]int, 0, n)
	type frame struct{ v, next int }
	var calls []frame
	visit := func(v int) {
		counter++
		index[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		calls = append(calls, frame{v: v})
	}
	for root := range n {
		if index[root] != 0 {
			continue
		}
		visit(root)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if f.next < len(adj[v]) {
				w := adj[v][f.next]
				f.next++
				if index[w] == 0 {
					visit(w)
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			top := len(stack) - 1
			for stack[top] != v {
				top--
			}
			comp := stack[top:]
			for _, w := range comp {
				onStack[w] = false
			}
			post = append(post, comp...)
			if len(comp) > 1 {
				comps = append(comps, slices.Clone(comp))
			}
			stack = stack[:top]
		}
	}
	return comps, post
}

// shortestCycle finds, by breadth-first search inside the component, the
// shortest cycle through the component's first node.
func shortestCycle(adj [][]int, comp []int) []int {
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
		for _, w := range adj[u] {
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
	deps  [][]int
	seen  []int // stamp of the query that last visited each task
	stamp int
	stack []int
}

func newUpstream(deps [][]int) *upstream { return &upstream{deps: deps} }

func (u *upstream) reaches(from, to int) bool {
	if slices.Contains(u.deps[from], to) {
		return true
	}
	if u.seen == nil {
		u.seen = make([]int, len(u.deps))
	}
	u.stamp++
	u.stack = append(u.stack[:0], from)
	u.seen[from] = u.stamp
	for len(u.stack) > 0 {
		v := u.stack[len(u.stack)-1]
		u.stack = u.stack[:len(u.stack)-1]
		for _, w := range u.deps[v] {
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
