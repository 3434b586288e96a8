package plan_test

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/graph/topo"

	"github.com/dagent-dev/dagent/plan"
)

// reportPlan is the plan of the DAG examples: two fetches, a chart of one,
// margins of both, and a report that reads the chart and the margins.
func reportPlan() *plan.Plan {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "sales", "input": "Download the sales data"},
  {"id": "costs", "input": "Download the cost data"},
  {"id": "chart", "input": "Chart {{results.sales.rows}}", "depends_on": "sales"},
  {"id": "margins", "input": "Compute the margins", "depends_on": ["sales", "costs"]},
  {"id": "report", "input": "Write up {{results.margins.total}} and {{results.costs}}",
   "inputs": {"figure": {"from": "chart", "slot": "png"}}, "depends_on": ["margins", "chart"]}
]}`))
	if err != nil {
		panic(err)
	}
	return p
}

// One call checks the plan and returns it checked. With a sound structure
// the DAG comes back even when the plan may not run, so that a linter can
// still walk it.
func ExamplePlan_DAG() {
	p := reportPlan()
	p.Tasks[1].Agent = "accountant" // neither defined by the plan nor a worker

	d, err := p.DAG()
	if d != nil {
		fmt.Println("phases:", d.Phases())
	}
	if err != nil {
		fmt.Println(err)
	}

	// Once the host names its worker, the plan may run.
	d, err = p.DAG(plan.WithWorkers("accountant"))
	fmt.Println("may run:", err == nil, d.Err() == nil)
	// Output:
	// phases: [[sales costs] [chart margins] [report]]
	// task costs: agent: agent "accountant" is not defined in the plan's agents and is not a registry worker [unknown_agent]
	// may run: true true
}

// A stage handed a DAG asks Err whether it may run it.
func ExampleDAG_Err() {
	p := reportPlan()
	p.Tasks[4].MaxRetries = 1000
	d, _ := p.DAG()
	fmt.Println(d.Err())
	// Output:
	// task report: max_retries: max_retries is 1000, over the limit of 100 [too_many_retries]
}

func ExampleDAG_Index() {
	d, _ := reportPlan().DAG()
	i, ok := d.Index("margins")
	fmt.Println(i, ok, d.Task(i).Input, d.Len())
	// Output:
	// 3 true Compute the margins 5
}

func ExampleDAG_Task() {
	d, _ := reportPlan().DAG()
	for i := range d.Len() {
		fmt.Println(i, d.Task(i).ID)
	}
	// Output:
	// 0 sales
	// 1 costs
	// 2 chart
	// 3 margins
	// 4 report
}

func ExampleDAG_Len() {
	d, _ := reportPlan().DAG()
	fmt.Println(d.Len())
	// Output:
	// 5
}

// ids names the tasks of a list of indexes.
func ids(d *plan.DAG, list []int) []string {
	out := make([]string, len(list))
	for k, i := range list {
		out[k] = d.Task(i).ID
	}
	return out
}

func ExampleDAG_Deps() {
	d, _ := reportPlan().DAG()
	i, _ := d.Index("report")
	fmt.Println(ids(d, d.Deps(i)))
	// Output:
	// [margins chart]
}

func ExampleDAG_Dependents() {
	d, _ := reportPlan().DAG()
	i, _ := d.Index("sales")
	fmt.Println(ids(d, d.Dependents(i)))
	// Output:
	// [chart margins]
}

// A task reads its dependencies and the tasks its inputs and templates
// name: report also reads costs, through margins.
func ExampleDAG_Reads() {
	d, _ := reportPlan().DAG()
	i, _ := d.Index("report")
	fmt.Println(ids(d, d.Reads(i)))
	// Output:
	// [margins chart costs]
}

func ExampleDAG_Refs() {
	d, _ := reportPlan().DAG()
	i, _ := d.Index("report")
	for _, ref := range d.Refs(i) {
		fmt.Printf("%s: task %q, path %q\n", d.Task(i).Input[ref.Start:ref.End], ref.Task, ref.Path)
	}
	// Output:
	// {{results.margins.total}}: task "margins", path "total"
	// {{results.costs}}: task "costs", path ""
}

func ExampleDAG_Level() {
	d, _ := reportPlan().DAG()
	for i := range d.Len() {
		fmt.Println(d.Task(i).ID, d.Level(i))
	}
	// Output:
	// sales 0
	// costs 0
	// chart 1
	// margins 1
	// report 2
}

func ExampleDAG_Order() {
	d, _ := reportPlan().DAG()
	fmt.Println(d.Order())
	// Output:
	// [sales costs chart margins report]
}

func ExampleDAG_Sinks() {
	d, _ := reportPlan().DAG()
	fmt.Println(d.Sinks())
	// Output:
	// [report]
}

func ExampleDAG_Edges() {
	d, _ := reportPlan().DAG()
	fmt.Println(d.Edges())
	// Output:
	// [[sales chart] [sales margins] [costs margins] [margins report] [chart report]]
}

// The DAG is a gonum graph: node ids are task indexes, and edges run from a
// dependency to its dependents, so gonum's algorithms apply as they are.
func ExampleDAG_From() {
	d, _ := reportPlan().DAG()
	sales, _ := d.Index("sales")
	report, _ := d.Index("report")
	var next []string
	for it := d.From(int64(sales)); it.Next(); {
		next = append(next, d.Task(int(it.Node().ID())).ID)
	}
	fmt.Println(next)
	fmt.Println(topo.PathExistsIn(d, d.Node(int64(sales)), d.Node(int64(report))))

	sorted, _ := topo.Sort(d)
	fmt.Println(len(sorted), slices.Index(sorted, d.Node(int64(report))))
	// Output:
	// [chart margins]
	// true
	// 5 4
}

// catalog is a host's catalog of workers and tools.
type catalog struct {
	workers map[string][]string
	tools   []string
}

func (c catalog) WorkerOutputs(name string) ([]string, bool) {
	slots, ok := c.workers[name]
	return slots, ok
}

func (c catalog) HasTool(name string) bool { return slices.Contains(c.tools, name) }

// One catalog tells the check about workers, their output slots and tools.
func ExampleWithCatalog() {
	p, err := plan.Parse([]byte(`{
  "agents": {"writer": {"prompt": "You write.", "tools": ["web", "shell"]}},
  "tasks": [
    {"id": "find", "agent": "search", "input": "Find sources"},
    {"id": "write", "agent": "writer", "depends_on": "find", "inputs": {"n": {"from": "find", "slot": "total"}}}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	host := catalog{workers: map[string][]string{"search": {"items", "count"}}, tools: []string{"web"}}
	for _, prob := range plan.Problems(p.Validate(plan.WithCatalog(host))) {
		fmt.Println(prob.Code, prob.Message)
	}
	// Output:
	// unknown_tool agent "writer" uses tool "shell", which the host's catalog does not have
	// undeclared_slot input "n" reads slot "total" of "find", but worker "search" declares items, count
}

func ExampleDAG_OutputValidator() {
	p, _ := plan.Parse([]byte(`{"tasks": [
  {"id": "count", "input": "Count the words",
   "output_schema": {"type": "object", "required": ["words"], "properties": {"words": {"type": "integer"}}}},
  {"id": "say", "input": "Say it", "depends_on": ["count"]}]}`))
	d, err := p.DAG()
	if err != nil {
		panic(err)
	}
	fmt.Println(d.OutputValidator(0).Validate(map[string]any{"words": 3}))
	fmt.Println(d.OutputValidator(0).Validate(map[string]any{"words": "three"}))
	fmt.Println(d.OutputValidator(1) == nil)
	// Output:
	// <nil>
	// at /words: got string, want integer
	// true
}
