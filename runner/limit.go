package runner

import "cmp"

// limit is a registry worker's bound on its attempts at once in one run
// (registry.Worker.MaxConcurrency). A task holds a place from when it is
// taken until its attempts end, retries and their backoff included; a
// ready task that finds no place is parked here, holding no place of the
// run's concurrency, until a task of the worker gives one back. A parked
// task implies a full limit, and so a running task that will give its
// place back: parking neither blocks the tasks behind it nor deadlocks.
// Guarded by the run's lock.
type limit struct {
	max     int
	running int
	parked  []int // a heap by core.less
}

// compare orders tasks a and b by priority, the higher first, then by
// their order in the plan.
func (c *core) compare(a, b int) int {
	if d := cmp.Compare(c.p.Tasks[b].Priority, c.p.Tasks[a].Priority); d != 0 {
		return d
	}
	return cmp.Compare(a, b)
}

// less reports whether task a starts before task b.
func (c *core) less(a, b int) bool { return c.compare(a, b) < 0 }

// pushHeap adds i to the heap h, ordered by less.
func pushHeap(h []int, i int, less func(a, b int) bool) []int {
	h = append(h, i)
	for k := len(h) - 1; k > 0; {
		up := (k - 1) / 2
		if !less(h[k], h[up]) {
			break
		}
		h[k], h[up] = h[up], h[k]
		k = up
	}
	return h
}

// popHeap removes the first of the non-empty heap h, ordered by less.
func popHeap(h []int, less func(a, b int) bool) (int, []int) {
	first, n := h[0], len(h)-1
	h[0] = h[n]
	h = h[:n]
	for k := 0; ; {
		c := 2*k + 1
		if c >= n {
			break
		}
		if c+1 < n && less(h[c+1], h[c]) {
			c++
		}
		if !less(h[c], h[k]) {
			break
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
	return first, h
}
