package web

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
)

func TestLayout(t *testing.T) {
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "a", "input": "x"},
		{"id": "b", "input": "x"},
		{"id": "c", "input": "x", "depends_on": ["b"]},
		{"id": "d", "input": "x", "depends_on": ["a"]},
		{"id": "e", "type": "synthesis_gate", "input": "x", "depends_on": ["c", "d"]}]}`))
	require.NoError(t, err)
	d, err := p.DAG()
	require.NoError(t, err)
	g := layout(d)

	at := map[string][2]int{}
	for _, n := range g.Nodes {
		at[n.ID] = [2]int{n.X, n.Y}
	}
	col := func(k int) int { return margin + k*(nodeW+colGap) }
	row := func(k int) int { return margin + k*(nodeH+rowGap) }
	assert.Equal(t, map[string][2]int{
		"a": {col(0), row(0)}, "b": {col(0), row(1)},
		// d follows a, its dependency, to the first row: no edges cross.
		"d": {col(1), row(0)}, "c": {col(1), row(1)},
		"e": {col(2), row(0)},
	}, at)
	assert.Equal(t, col(2)+nodeW+margin, g.Width)
	assert.Equal(t, row(2)-rowGap+margin, g.Height)
	require.Len(t, g.Edges, 4)
	// From the right side of b to the left side of c.
	assert.Contains(t, g.Edges, "M188 77C220 77 220 77 252 77")
	for _, n := range g.Nodes {
		if n.ID == "e" {
			assert.Equal(t, plan.TypeSynthesisGate, n.Type)
		}
	}
}

func TestLayoutLabels(t *testing.T) {
	long := "a_task_whose_id_is_longer_than_its_box"
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "` + long + `", "input": "x"}]}`))
	require.NoError(t, err)
	d, err := p.DAG()
	require.NoError(t, err)
	g := layout(d)
	require.Len(t, g.Nodes, 1)
	assert.Equal(t, long, g.Nodes[0].ID)
	assert.Equal(t, "a_task_whose_id_is_lo…", g.Nodes[0].Label)
	assert.Empty(t, g.Edges)
}
