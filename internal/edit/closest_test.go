package edit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/internal/edit"
)

func TestClosest(t *testing.T) {
	keys := []string{"mission", "agents", "tasks", "depends_on", "critical", "tools", "prompt"}
	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"mision", keys, "mission"},
		{"depend_on", keys, "depends_on"},
		{"tols", keys, "tools"},
		{"promt", keys, "prompt"},
		{"Critical", keys, "critical"},
		{"TASKS", keys, "tasks"},
		{"colour", keys, ""},
		{"x", []string{"y"}, ""},
		{"ab", []string{"a"}, ""},
		{"cuont", []string{"contains?", "count"}, "count"},
		{"inc", []string{"and"}, ""},
		{"contain?", []string{"contains?", "count"}, "contains?"},
		// Equally near: the first candidate wins.
		{"cat", []string{"bat", "car"}, "bat"},
		{"cat", []string{"car", "bat"}, "car"},
		{"anything", nil, ""},
		{"", []string{"a"}, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s in %v", tt.name, tt.candidates), func(t *testing.T) {
			got, ok := edit.Closest(tt.name, tt.candidates)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want != "", ok)
		})
	}
}

func ExampleClosest() {
	fmt.Println(edit.Closest("depend_on", []string{"id", "depends_on", "input"}))
	fmt.Println(edit.Closest("colour", []string{"id", "depends_on", "input"}))
	// Output:
	// depends_on true
	//  false
}
