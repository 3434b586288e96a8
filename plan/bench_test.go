package plan_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/plan"
)

// layeredPlan writes a plan of n tasks in 10 layers, each task past the
// first layer depending on two tasks of the layer before. Every task has an
// id, an agent, an input with a {{results.ID.path}} template and its
// dependencies; full tasks also set type, policy, retries, a timeout, a
// predicate and an input wiring — every field an LLM plan uses, at scale.
func layeredPlan(n int, full bool) []byte {
	width := max(n/10, 1)
	var b strings.Builder
	b.WriteString(`{"mission": "benchmark", "agents": {"worker": {"prompt": "You work.", "tools": ["search"]}}, "tasks": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n"+`{"id": "t%d", "agent": "worker"`, i)
		if full {
			b.WriteString(`, "type": "task", "on_failure": "retry", "max_retries": 3, "timeout": "30s", "verification": "(> (count (get data/result \"items\")) 0)"`)
		}
		if layer := i / width; layer > 0 {
			a := (layer-1)*width + i%width
			c := (layer-1)*width + (i+1)%width
			fmt.Fprintf(&b, `, "depends_on": ["t%d", "t%d"], "input": "Refine {{results.t%d.items}}"`, a, c, a)
			if full {
				fmt.Fprintf(&b, `, "inputs": {"seed": {"from": "t%d", "slot": "items.0"}}`, c)
			}
		} else {
			b.WriteString(`, "input": "Find items about topic ` + strconv.Itoa(i) + `"`)
		}
		b.WriteString("}")
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// BenchmarkParseValidatePhases measures what every command that reads a plan
// pays: Parse, then DAG, which validates and settles the phases.
func BenchmarkParseValidatePhases(b *testing.B) {
	for _, shape := range []struct {
		name string
		full bool
	}{{"typical", false}, {"full", true}} {
		for _, n := range []int{100, 1_000, 10_000} {
			data := layeredPlan(n, shape.full)
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					p, err := plan.Parse(data)
					if err != nil {
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
				b.ReportMetric(float64(len(data))/float64(n), "bytes/task")
			})
		}
	}
}

// BenchmarkCheck measures the check alone, on a plan built in Go: a layered
// DAG of 10,000 tasks, 10 layers of 1,000.
func BenchmarkCheck(b *testing.B) {
	p := plantest.Layered(10, 1_000, plan.DefaultAgent)
	b.ReportAllocs()
	for b.Loop() {
		d, err := p.DAG()
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Phases()) != 10 {
			b.Fatalf("got %d phases, want 10", len(d.Phases()))
		}
	}
}

// BenchmarkParseLayout measures Parse of one plan written on one line and
// indented: the time must follow the bytes, whatever the layout. 10,000
// tasks of 600 or 6,000 bytes of input make about 6 MB and 60 MB.
func BenchmarkParseLayout(b *testing.B) {
	for _, size := range []int{600, 6_000} {
		for _, oneLine := range []bool{true, false} {
			data := bigPlan(10_000, size, oneLine)
			layout := "indented"
			if oneLine {
				layout = "one-line"
			}
			b.Run(fmt.Sprintf("%dMB/%s", len(data)>>20, layout), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := plan.Parse(data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkParseTooManyTasks measures how soon a one-line plan of 100,000
// tasks is refused.
func BenchmarkParseTooManyTasks(b *testing.B) {
	var buf strings.Builder
	buf.WriteString(`{"tasks": [`)
	for i := range 100_000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"id": "t%d", "agent": "worker", "input": "Find items about topic %d", "depends_on": ["t%d"]}`, i, i, i+1)
	}
	buf.WriteString(`]}`)
	data := []byte(buf.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := plan.Parse(data); !plan.Problems(err)[0].Is(plan.ErrInvalid) || plan.Problems(err)[0].Code != plan.CodeTooManyTasks {
			b.Fatal(err)
		}
	}
}
