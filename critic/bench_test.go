package critic_test

import (
	"fmt"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
)

// predicateShapes are the kinds of verification a planner writes; %d makes
// a variant.
var predicateShapes = []string{
	`(> (count (get data/result "items")) %d)`,
	`(if (empty? (get data/result "items")) "expected items, got none %d" true)`,
	`(and (map? data/result) (contains? data/result "summary") (> %d -1))`,
	`(>= (count (str (get data/result "summary"))) %d)`,
	`(every? (fn [x] (> (count (str x)) %d)) (get data/result "items"))`,
}

// layeredPlan is a plan of n tasks laid out the way planners lay out big
// plans: blocks of nine parallel tasks behind a synthesis gate, each block
// after the previous gate, so no phase is wider than ten. Every task has a
// verification predicate; with distinct false the predicates are drawn
// from twenty sources, with distinct true each is its own. Every other
// task reads the previous gate through a {{results.ID}} template, the
// others name it.
func layeredPlan(n int, distinct bool) *plan.Plan {
	p := &plan.Plan{Mission: "benchmark", Tasks: make([]plan.Task, 0, n)}
	prevGate := ""
	var block []string
	for i := 0; len(p.Tasks) < n; i++ {
		variant := i % 4
		if distinct {
			variant = i
		}
		pred := fmt.Sprintf(predicateShapes[i%len(predicateShapes)], variant)
		if len(block) == 9 || len(p.Tasks) == n-1 && len(block) > 0 {
			g := plan.NewTask(fmt.Sprintf("gate_%d", i), "Combine the results of the block")
			g.Type = plan.TypeSynthesisGate
			g.DependsOn = block
			g.Verification = pred
			p.Tasks = append(p.Tasks, g)
			prevGate, block = g.ID, nil
			continue
		}
		t := plan.NewTask(fmt.Sprintf("task_%d", i), fmt.Sprintf("Analyse shard %d", i))
		t.OnFailure = plan.PolicyRetry
		t.Verification = pred
		if prevGate != "" {
			t.DependsOn = []string{prevGate}
			if i%2 == 0 {
				t.Input += " with {{results." + prevGate + ".summary}}"
			} else {
				t.Input += " using the output of " + prevGate
			}
		}
		p.Tasks = append(p.Tasks, t)
		block = append(block, t.ID)
	}
	return p
}

func TestLayeredPlanIsTypical(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		p := layeredPlan(10_000, distinct)
		if len(p.Tasks) != 10_000 {
			t.Fatalf("%d tasks", len(p.Tasks))
		}
		d, err := p.DAG()
		if err != nil {
			t.Fatal(err)
		}
		for _, phase := range d.Phases() {
			if len(phase) > critic.MaxParallel {
				t.Fatalf("a phase of %d tasks", len(phase))
			}
		}
		sources := make(map[string]bool)
		for _, task := range p.Tasks {
			sources[task.Verification] = true
		}
		if !distinct && len(sources) != 20 || distinct && len(sources) != len(p.Tasks) {
			t.Fatalf("distinct %v: %d predicate sources", distinct, len(sources))
		}
		if rep := critic.Review(p); len(rep.Issues) != 0 {
			t.Fatalf("distinct %v: the benchmark plan should be clean:\n%s", distinct, format(rep))
		}
	}
}

func BenchmarkReview(b *testing.B) {
	for _, bc := range []struct {
		name     string
		distinct bool
	}{{"typical", false}, {"distinct_predicates", true}} {
		b.Run(bc.name, func(b *testing.B) {
			p := layeredPlan(10_000, bc.distinct)
			b.ReportAllocs()
			for b.Loop() {
				critic.Review(p)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/plan")
		})
	}
}
