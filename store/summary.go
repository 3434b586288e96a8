package store

import (
	"cmp"
	"maps"
	"slices"

	"github.com/dagent-dev/dagent/metaplanner"
)

// Summarize counts how the agents and tools of outcomes fared, for
// [metaplanner.WithMemory]: a task done or failed counts for its agent and
// for each of the agent's tools; a skipped or waiting task counts for
// neither. Names come sorted, by name.
func Summarize(outcomes []TaskOutcome) *metaplanner.Memory {
	runs := map[string]bool{}
	agents, tools := map[string]*tally{}, map[string]*tally{}
	for _, o := range outcomes {
		runs[o.RunID] = true
		if o.Status != "done" && o.Status != "failed" {
			continue
		}
		if o.Agent != "" {
			add(agents, o.Agent, o)
		}
		for _, t := range o.Tools {
			add(tools, t, o)
		}
	}
	return &metaplanner.Memory{Runs: len(runs), Agents: fared(agents), Tools: fared(tools)}
}

// tally is what Summarize counts of one name.
type tally struct {
	done, failed int
	classes      map[string]int
}

func add(m map[string]*tally, name string, o TaskOutcome) {
	t := m[name]
	if t == nil {
		t = &tally{classes: map[string]int{}}
		m[name] = t
	}
	if o.Status == "done" {
		t.done++
		return
	}
	t.failed++
	if o.Class != "" {
		t.classes[o.Class]++
	}
}

func fared(m map[string]*tally) []metaplanner.Fared {
	var out []metaplanner.Fared
	for _, name := range slices.Sorted(maps.Keys(m)) {
		t := m[name]
		f := metaplanner.Fared{Name: name, Done: t.done, Failed: t.failed}
		for class, n := range t.classes {
			f.Classes = append(f.Classes, metaplanner.ClassCount{Class: class, Count: n})
		}
		slices.SortFunc(f.Classes, func(a, b metaplanner.ClassCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class))
		})
		out = append(out, f)
	}
	return out
}
