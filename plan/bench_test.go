package plan_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/plan"
)

// layeredPlan writes a plan of n tasks in layers of width w, each task past
// the first layer depending on two tasks of the layer before, with a
// template, an input wiring and a predicate: the shape LLM plans have, at
// scale.
func layeredPlan(n, width int) []byte {
	var b strings.Builder
	b.WriteString(`{"mission": "benchmark", "agents": {"worker": {"prompt": "You work.", "tools": ["search"]}}, "tasks": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n"+`{"id": "t%d", "agent": "worker", "type": "task", "on_failure": "retry", "max_retries": 3, "timeout": "30s", "verification": "(> (count (get data/result \"items\")) 0)"`, i)
		if layer := i / width; layer > 0 {
			a := (layer-1)*width + i%width
			c := (layer-1)*width + (i+1)%width
			fmt.Fprintf(&b, `, "depends_on": ["t%d", "t%d"], "input": "Refine {{results.t%d.items}}", "inputs": {"seed": {"from": "t%d", "slot": "items.0"}}`, a, c, a, c)
		} else {
			b.WriteString(`, "input": "Find items about topic ` + strconv.Itoa(i) + `"`)
		}
		b.WriteString("}")
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// BenchmarkParseValidatePhases measures what every command that reads a plan
// pays: Parse, Validate, the DAG and its phases. 10 layers at every size.
func BenchmarkParseValidatePhases(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		data := layeredPlan(n, n/10)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := plan.Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Validate(); err != nil {
					b.Fatal(err)
				}
				d, err := p.DAG()
				if err != nil {
					b.Fatal(err)
				}
				if len(d.Phases()) != 10 {
					b.Fatalf("got %d phases, want 10", len(d.Phases()))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
		})
	}
}
