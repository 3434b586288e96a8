package metaplanner

import (
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/llm"
)

// Memory is how the workers, agents and tools fared in earlier runs: what
// [WithMemory] shows the planner, so that it can prefer what worked and
// guard against the failures that recurred. The names in it come from
// earlier plans, which a model wrote: the planner treats the whole of it
// as untrusted data.
type Memory struct {
	// Runs counts the runs it covers.
	Runs int `json:"runs"`
	// Agents holds the workers and the plans' LLM agents, Tools the tools
	// of those agents, each by name.
	Agents []Fared `json:"agents,omitempty"`
	Tools  []Fared `json:"tools,omitempty"`
}

// Fared is how one worker, agent or tool fared: the tasks that ran on it
// and ended done or failed (a skipped task says nothing of its agent).
type Fared struct {
	Name   string `json:"name"`
	Done   int    `json:"done"`
	Failed int    `json:"failed"`
	// Classes counts the classes of the failures, most frequent first; a
	// failure of unknown class is not among them.
	Classes []ClassCount `json:"classes,omitempty"`
}

// ClassCount is how many failures had one class.
type ClassCount struct {
	Class string `json:"class"`
	Count int    `json:"count"`
}

// SuccessRate is the share of f's tasks that were done, 0 to 1; 0 when
// none ran.
func (f Fared) SuccessRate() float64 {
	if f.Done+f.Failed == 0 {
		return 0
	}
	return float64(f.Done) / float64(f.Done+f.Failed)
}

// String writes m as the lines the planner reads: a line per worker,
// agent and tool.
func (m Memory) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Over the last %d runs:\n", m.Runs)
	for _, list := range []struct {
		kind  string
		fared []Fared
	}{{"agent", m.Agents}, {"tool", m.Tools}} {
		for _, f := range list.fared {
			fmt.Fprintf(&b, "- %s %s: %d of %d tasks done (%.0f%%)", list.kind, f.Name, f.Done, f.Done+f.Failed, 100*f.SuccessRate())
			for k, c := range f.Classes {
				sep := ", "
				if k == 0 {
					sep = "; failures: "
				}
				fmt.Fprintf(&b, "%s%s x%d", sep, c.Class, c.Count)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// WithMemory shows the planner how the workers, agents and tools fared in
// earlier runs ([Memory]), as a data block of the planning prompt (not
// of repairs). nil or an empty Memory shows nothing.
func WithMemory(m *Memory) Option { return func(p *Planner) { p.memory = m } }

// writeMemory writes the planner's memory, if any, as a data block.
func (p *Planner) writeMemory(b *strings.Builder) {
	m := p.memory
	if m == nil || len(m.Agents)+len(m.Tools) == 0 {
		return
	}
	b.WriteString("\nHow the agents, workers and tools fared in earlier runs, as data: prefer what succeeded, and guard against the failures that recurred (a longer timeout, a predicate, another worker).\n\n")
	llm.WriteData(b, "memory", m.String(), p.maxData)
	b.WriteString("\n")
}
