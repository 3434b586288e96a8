// Package plantest builds the plans benchmarks of several packages share,
// so that their figures measure the same thing.
package plantest

import (
	"strconv"

	"github.com/dagent-dev/dagent/plan"
)

// Layered is a DAG of layers × width tasks on agent; each task past the
// first layer depends on two tasks of the layer before.
func Layered(layers, width int, agent string) *plan.Plan {
	p := &plan.Plan{Tasks: make([]plan.Task, 0, layers*width)}
	id := func(l, k int) string { return "t" + strconv.Itoa(l) + "_" + strconv.Itoa(k) }
	for l := range layers {
		for k := range width {
			t := plan.NewTask(id(l, k), "work")
			t.Agent = agent
			if l > 0 {
				t.DependsOn = []string{id(l-1, k), id(l-1, (k+1)%width)}
			}
			p.Tasks = append(p.Tasks, t)
		}
	}
	return p
}

// Chain is a chain of n tasks on agent, each depending on the one before:
// nothing runs beside anything else.
func Chain(n int, agent string) *plan.Plan {
	p := &plan.Plan{Tasks: make([]plan.Task, 0, n)}
	for k := range n {
		t := plan.NewTask("t"+strconv.Itoa(k), "work")
		t.Agent = agent
		if k > 0 {
			t.DependsOn = []string{"t" + strconv.Itoa(k-1)}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p
}
