package plan_test

import (
	"fmt"

	"github.com/dagent-dev/dagent/plan"
)

// Keys Parse does not understand are dropped, and recorded on the plan
// with where they were and, for a near miss, the key they most likely
// misspell: a misspelt "depends_on" is a dependency lost.
func ExampleUnknownKey() {
	p, err := plan.Parse([]byte(`{"tasks": [
  {"id": "a", "input": "Fetch the page"},
  {"id": "b", "input": "Summarise it", "depend_on": ["a"], "priority": "high"}
]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("b depends on", p.Tasks[1].DependsOn)
	for _, u := range p.Unknown {
		fmt.Println(u)
		if u.Suggestion != "" {
			fmt.Println("  near miss of", u.Suggestion)
		}
	}
	// Output:
	// b depends on []
	// 3:53: task b: key "depend_on" is not part of the plan format and was ignored; did you mean "depends_on"?
	//   near miss of depends_on
	// 3:72: task b: key "priority" is not part of the plan format and was ignored
}
