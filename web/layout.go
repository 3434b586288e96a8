package web

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
)

// The drawing of a plan: a column per phase — the tasks of a column
// depend only on tasks of the columns left of it — a box per task, and a
// curve from each dependency to its dependent.
const (
	nodeW, nodeH = 176, 34
	colGap       = 64
	rowGap       = 14
	margin       = 12
	// labelRunes is about how many characters of a task's id its box
	// shows; the whole id is its title.
	labelRunes = 22
)

// graph is a plan laid out for an SVG drawing.
type graph struct {
	Width, Height int
	// NodeW and NodeH are the size of a task's box.
	NodeW, NodeH int
	Nodes        []node
	Edges        []string // the path of each edge
}

// node is a task's box.
type node struct {
	ID, Label string
	// Type is the task's type, which shapes its box.
	Type  plan.TaskType
	X, Y  int
	State string
	// Href is the task's page; empty for a plan that did not run.
	Href string
}

// layout lays d out. Within a column the tasks go by the mean row of their
// dependencies, then in plan order, which keeps most edges short and
// uncrossed.
func layout(d *plan.DAG) *graph {
	g := &graph{NodeW: nodeW, NodeH: nodeH}
	row := make(map[string]float64, d.Len())
	height := 0
	for col, phase := range d.Phases() {
		type placed struct {
			id  string
			at  float64
			ord int
		}
		ps := make([]placed, len(phase))
		for k, id := range phase {
			i, _ := d.Index(id)
			at, n := 0.0, 0
			for _, dep := range d.Deps(i) {
				at += row[d.Task(dep).ID]
				n++
			}
			if n > 0 {
				at /= float64(n)
			} else {
				at = float64(k)
			}
			ps[k] = placed{id, at, k}
		}
		slices.SortStableFunc(ps, func(a, b placed) int { return cmp.Compare(a.at, b.at) })
		for r, p := range ps {
			row[p.id] = float64(r)
			i, _ := d.Index(p.id)
			g.Nodes = append(g.Nodes, node{
				ID: p.id, Label: prose.Excerpt(prose.Visible(p.id), labelRunes), Type: d.Task(i).Type,
				X: margin + col*(nodeW+colGap), Y: margin + r*(nodeH+rowGap),
			})
		}
		height = max(height, len(phase))
		g.Width = margin*2 + col*(nodeW+colGap) + nodeW
	}
	g.Height = margin*2 + max(height*(nodeH+rowGap)-rowGap, 0)
	at := make(map[string]*node, len(g.Nodes))
	for k := range g.Nodes {
		at[g.Nodes[k].ID] = &g.Nodes[k]
	}
	for _, e := range d.Edges() {
		from, to := at[e[0]], at[e[1]]
		x1, y1 := from.X+nodeW, from.Y+nodeH/2
		x2, y2 := to.X, to.Y+nodeH/2
		g.Edges = append(g.Edges, fmt.Sprintf("M%d %dC%d %d %d %d %d %d", x1, y1, x1+colGap/2, y1, x2-colGap/2, y2, x2, y2))
	}
	return g
}
