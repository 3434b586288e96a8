package plan_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/dagent-dev/dagent/plan"
)

// An LLM's answer as it usually comes: prose around a fenced JSON block,
// "steps" instead of "tasks", numeric ids, "requires" instead of
// "depends_on", a string where a list is meant, and a type written in words.
func ExampleParse() {
	answer := "Sure! Here is a plan for the market report:\n" +
		"\n" +
		"```json\n" +
		`{
  "goal": "Write a short market report on home batteries",
  "agents": {
    "researcher": {"role": "You find recent, sourced facts.", "capabilities": ["web_search"]},
    "writer": "You write clear, concise reports."
  },
  "steps": [
    {"step_id": 1, "worker": "researcher", "query": "Find 2024 sales figures for home batteries"},
    {"step_id": 2, "worker": "researcher", "query": "List the five largest manufacturers"},
    {"step_id": 3, "type": "Synthesis Gate", "requires": [1, 2], "action": "Merge the findings"},
    {"step_id": 4, "assigned_to": "writer", "requires": 3, "action": "Write the report from {{results.3}}", "timeout": "2 min"}
  ]
}` + "\n" +
		"```\n" +
		"\n" +
		"Let me know if you want more detail on any step."

	p, err := plan.Parse([]byte(answer))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("mission:", p.Mission)
	for _, t := range p.Tasks {
		fmt.Printf("%s  agent=%-10s type=%-14s depends_on=%v\n", t.ID, t.Agent, t.Type, t.DependsOn)
	}
	fmt.Println("researcher tools:", p.Agents["researcher"].Tools)
	fmt.Println("task 4 timeout:", p.Tasks[3].Timeout)
	// Output:
	// mission: Write a short market report on home batteries
	// 1  agent=researcher type=task           depends_on=[]
	// 2  agent=researcher type=task           depends_on=[]
	// 3  agent=default    type=synthesis_gate depends_on=[1 2]
	// 4  agent=writer     type=task           depends_on=[3]
	// researcher tools: [web_search]
	// task 4 timeout: 2m0s
}

// Validate reports every problem at once, each with a stable code, the task
// and the field at fault.
func ExamplePlan_Validate() {
	p, err := plan.Parse([]byte(`{
  "agents": {"writer": "You write."},
  "tasks": [
    {"id": "fetch_data", "input": "Download the sales data"},
    {"id": "analyze", "input": "Find trends", "depends_on": ["Fetch Data", "report"]},
    {"id": "report", "agent": "editor", "input": "Write up {{results.analyze}}", "depends_on": "analyze"}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = p.Validate()
	for _, pr := range plan.Problems(err) {
		fmt.Printf("%s %s [%s] %s\n", pr.Pos, pr.TaskID, pr.Code, pr.Message)
	}

	// A worker of the host's registry is a known agent.
	err = p.Validate(plan.WithWorkers("editor"))
	fmt.Println(len(plan.Problems(err)), "problems once editor is a registry worker")
	// Output:
	// 5:5 analyze [missing_dependency] depends on "Fetch Data", which is not a task of the plan; did you mean "fetch_data"?
	// 5:5 analyze [cycle] dependency cycle: analyze -> report -> analyze
	// 6:5 report [unknown_agent] agent "editor" is not defined in the plan's agents and is not a registry worker
	// 2 problems once editor is a registry worker
}

// Phases groups tasks by level: every task of a phase can run in parallel
// once the phases before it are settled.
func ExampleDAG_Phases() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "fetch_sales", "input": "Download the sales data"},
  {"id": "fetch_costs", "input": "Download the cost data"},
  {"id": "margins", "input": "Compute the margins", "depends_on": ["fetch_sales", "fetch_costs"]},
  {"id": "chart", "input": "Chart the sales", "depends_on": "fetch_sales"},
  {"id": "report", "input": "Write the report", "depends_on": ["margins", "chart"]}
]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := p.DAG()
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, phase := range d.Phases() {
		fmt.Printf("phase %d: %s\n", i, strings.Join(phase, ", "))
	}
	// Output:
	// phase 0: fetch_sales, fetch_costs
	// phase 1: margins, chart
	// phase 2: report
}

// Canonical writes the plan as `dagent fmt` prints it: aliases resolved,
// every default filled in, keys in a stable order.
func ExamplePlan_Canonical() {
	p, err := plan.Parse([]byte(`{"steps": [{"name": "fetch", "query": "Find X", "retries": 1, "timeout": "90 seconds"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := p.Canonical()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// {
	//   "tasks": [
	//     {
	//       "id": "fetch",
	//       "agent": "default",
	//       "input": "Find X",
	//       "depends_on": [],
	//       "type": "task",
	//       "on_failure": "stop",
	//       "max_retries": 1,
	//       "critical": true,
	//       "timeout": "1m30s",
	//       "on_verification_failure": "retry"
	//     }
	//   ]
	// }
}

// Render draws the DAG; here as a Mermaid flowchart, a synthesis gate as a
// hexagon.
func ExampleDAG_Render() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "search", "input": "Search"},
  {"id": "read", "input": "Read"},
  {"id": "merge", "type": "gate", "depends_on": ["search", "read"]}
]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := p.DAG()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := d.Render(os.Stdout, plan.Mermaid); err != nil {
		fmt.Println(err)
	}
	// Output:
	// flowchart TD
	//     t0["search"]
	//     t1["read"]
	//     t2{{"merge"}}
	//     t0 --> t2
	//     t1 --> t2
}

// Schema is the JSON Schema of the canonical plan, the structured-output
// format to give an LLM that writes plans.
func ExampleSchema() {
	var schema struct {
		Schema   string   `json:"$schema"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(plan.Schema(), &schema); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(schema.Schema)
	fmt.Println("required:", schema.Required)
	// Output:
	// https://json-schema.org/draft/2020-12/schema
	// required: [tasks]
}
