package plan_test

import (
	"math/rand"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/dagent-dev/dagent/plan"
)

// gtDiamond is fetch(3) -> left(1), right(2) -> merge(0), written with the
// sink first so that indexes differ from the order.
func gtDiamond() *plan.Plan {
	return vtPlan(vtTask("merge", "left", "right"), vtTask("left", "fetch"), vtTask("right", "fetch"), vtTask("fetch"))
}

// gtIDs lists the ids of a gonum node iterator, in its order.
func gtIDs(it graph.Nodes) []int64 {
	var ids []int64
	for it.Next() {
		ids = append(ids, it.Node().ID())
	}
	return ids
}

func TestDAGIsAGonumGraph(t *testing.T) {
	d := dtMustDAG(t, gtDiamond())
	var g graph.Directed = d

	t.Run("nodes", func(t *testing.T) {
		nodes := g.Nodes()
		assert.Equal(t, 4, nodes.Len())
		assert.Equal(t, []int64{0, 1, 2, 3}, gtIDs(nodes), "source order")
		assert.Equal(t, 0, nodes.Len(), "consumed")
		assert.Nil(t, nodes.Node(), "past the end")
		nodes.Reset()
		assert.Equal(t, 4, nodes.Len(), "reset")
		for id := range int64(4) {
			require.NotNil(t, g.Node(id))
			assert.Equal(t, id, g.Node(id).ID())
		}
		assert.Nil(t, g.Node(4))
		assert.Nil(t, g.Node(-1))
	})

	tests := []struct {
		name     string
		id       int64
		from, to []int64 // nil: none
	}{
		{"merge", 0, nil, []int64{1, 2}},
		{"left", 1, []int64{0}, []int64{3}},
		{"right", 2, []int64{0}, []int64{3}},
		{"fetch", 3, []int64{1, 2}, nil},
		{"no such node", 4, nil, nil},
		{"negative id", -1, nil, nil},
	}
	for _, tt := range tests {
		t.Run("from and to "+tt.name, func(t *testing.T) {
			from, to := g.From(tt.id), g.To(tt.id)
			require.NotNil(t, from)
			require.NotNil(t, to)
			assert.Equal(t, len(tt.from), from.Len())
			assert.Equal(t, tt.from, gtIDs(from), "dependents")
			assert.Equal(t, tt.to, gtIDs(to), "dependencies")
		})
	}

	edges := []struct {
		u, v    int64
		fromTo  bool
		between bool
	}{
		{3, 1, true, true},
		{3, 2, true, true},
		{1, 0, true, true},
		{2, 0, true, true},
		{0, 1, false, true},  // not from the dependent, but between them
		{3, 0, false, false}, // no transitive edge
		{1, 2, false, false},
		{0, 0, false, false},
		{3, 9, false, false},
		{-1, 0, false, false},
	}
	for _, e := range edges {
		t.Run("edge "+strconv.FormatInt(e.u, 10)+"-"+strconv.FormatInt(e.v, 10), func(t *testing.T) {
			assert.Equal(t, e.fromTo, g.HasEdgeFromTo(e.u, e.v), "HasEdgeFromTo")
			assert.Equal(t, e.between, g.HasEdgeBetween(e.u, e.v), "HasEdgeBetween")
			assert.Equal(t, e.between, g.HasEdgeBetween(e.v, e.u), "HasEdgeBetween is symmetric")
			edge := g.Edge(e.u, e.v)
			if !e.fromTo {
				assert.Nil(t, edge)
				return
			}
			require.NotNil(t, edge)
			assert.Equal(t, e.u, edge.From().ID())
			assert.Equal(t, e.v, edge.To().ID())
			assert.Equal(t, e.v, edge.ReversedEdge().From().ID())
			assert.Equal(t, e.u, edge.ReversedEdge().To().ID())
		})
	}

	t.Run("gonum algorithms", func(t *testing.T) {
		assert.True(t, topo.IsPathIn(g, []graph.Node{g.Node(3), g.Node(1), g.Node(0)}), "fetch, left, merge")
		assert.False(t, topo.IsPathIn(g, []graph.Node{g.Node(0), g.Node(1)}), "against the flow")
		assert.True(t, topo.PathExistsIn(g, g.Node(3), g.Node(0)))

		shortest := path.DijkstraFrom(g.Node(3), g)
		_, weight := shortest.To(0)
		assert.Equal(t, 2.0, weight, "merge is two dependencies away from fetch")
		_, weight = shortest.To(3)
		assert.Equal(t, 0.0, weight)

		sorted, err := topo.Sort(g)
		require.NoError(t, err)
		at := make(map[int64]int)
		for k, n := range sorted {
			at[n.ID()] = k
		}
		for i := range d.Len() {
			for _, j := range d.Deps(i) {
				assert.Less(t, at[int64(j)], at[int64(i)], "gonum orders %d before %d", j, i)
			}
		}
		assert.Len(t, topo.TarjanSCC(g), 4, "one component per task")
	})
}

func TestDAGGraphHasCycles(t *testing.T) {
	// The graph of a plan with a cycle backs the cycle check; the DAG
	// itself is not returned.
	p := vtPlan(vtTask("a", "c"), vtTask("b", "a"), vtTask("c", "b"), vtTask("d", "a"))
	d, err := p.DAG()
	assert.Nil(t, d)
	assert.Equal(t, []plan.Code{plan.CodeCycle}, ptCodes(err))
	assert.Equal(t, "task a: depends_on: dependency cycle: a -> c -> b -> a [cycle]", err.Error())
}

func TestDAGAccessors(t *testing.T) {
	p := vtPlan(
		vtWith(vtTask("report", "chart", "margins", "chart"), func(t *plan.Task) {
			t.Input = "Write up {{results.margins.total}} and {{ results.fetch.rows }}, {{results.1.2.x}}"
			t.Inputs = map[string]plan.InputRef{"z": {From: "chart"}, "a": {From: "1.2", Slot: "v"}}
		}),
		vtTask("chart", "fetch"),
		vtTask("margins", "fetch", "1.2"),
		vtTask("fetch"),
		vtTask("1.2"),
		vtTask("unused", "fetch"),
	)
	d := dtMustDAG(t, p)
	require.Equal(t, 6, d.Len())
	assert.Same(t, p, d.Plan())
	assert.NoError(t, d.Err())

	tests := []struct {
		id         string
		index      int
		deps       []int
		dependents []int
		reads      []int
		level      int
		refs       []string // task/path
	}{
		{"report", 0, []int{1, 2}, []int{}, []int{1, 2, 4, 3}, 2, []string{"margins/total", "fetch/rows", "1.2/x"}},
		{"chart", 1, []int{3}, []int{0}, []int{3}, 1, nil},
		{"margins", 2, []int{3, 4}, []int{0}, []int{3, 4}, 1, nil},
		{"fetch", 3, []int{}, []int{1, 2, 5}, []int{}, 0, nil},
		{"1.2", 4, []int{}, []int{2}, []int{}, 0, nil},
		{"unused", 5, []int{3}, []int{}, []int{3}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			i, ok := d.Index(tt.id)
			require.True(t, ok)
			assert.Equal(t, tt.index, i)
			assert.Same(t, &p.Tasks[i], d.Task(i))
			assert.Equal(t, tt.deps, d.Deps(i), "deduplicated, in depends_on order")
			assert.Equal(t, tt.dependents, d.Dependents(i), "in source order")
			assert.Equal(t, tt.reads, d.Reads(i), "dependencies, then inputs by slot, then templates")
			assert.Equal(t, tt.level, d.Level(i))
			var refs []string
			for _, ref := range d.Refs(i) {
				refs = append(refs, ref.Task+"/"+ref.Path)
				assert.Contains(t, p.Tasks[i].Input[ref.Start:ref.End], "{{")
			}
			assert.Equal(t, tt.refs, refs)
		})
	}
	_, ok := d.Index("nope")
	assert.False(t, ok)
	assert.Equal(t, []string{"report", "unused"}, d.Sinks())
	assert.Equal(t, [][]string{{"fetch", "1.2"}, {"chart", "margins", "unused"}, {"report"}}, d.Phases())
	assert.Equal(t, []string{"fetch", "1.2", "chart", "margins", "unused", "report"}, d.Order())

	t.Run("returned slices cannot grow into each other", func(t *testing.T) {
		d := dtMustDAG(t, gtDiamond())
		deps := d.Deps(1)
		_ = append(deps, 99)
		assert.Equal(t, []int{3}, d.Deps(2), "the next task's list is intact")
		phase := d.Phases()[0]
		_ = append(phase, "x")
		assert.Equal(t, []string{"left", "right"}, d.Phases()[1])
	})
}

// gtReference computes levels the slow, obvious way: repeat until nothing
// changes, each task one above its highest dependency.
func gtReference(p *plan.Plan) map[string]int {
	level := make(map[string]int, len(p.Tasks))
	for _, task := range p.Tasks {
		level[task.ID] = 0
	}
	for changed := true; changed; {
		changed = false
		for _, task := range p.Tasks {
			l := 0
			for _, dep := range task.DependsOn {
				l = max(l, level[dep]+1)
			}
			if l != level[task.ID] {
				level[task.ID] = l
				changed = true
			}
		}
	}
	return level
}

func TestDAGMatchesAReference(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for trial := range 200 {
		n := 1 + r.Intn(60)
		place := r.Perm(n)
		tasks := make([]plan.Task, n)
		for rank := range n {
			var deps []string
			for range r.Intn(4) {
				if rank > 0 {
					deps = append(deps, "t"+strconv.Itoa(place[r.Intn(rank)]))
				}
			}
			tasks[place[rank]] = vtTask("t"+strconv.Itoa(place[rank]), deps...)
		}
		p := vtPlan(tasks...)
		d := dtMustDAG(t, p)
		want := gtReference(p)

		levels := 0
		for _, l := range want {
			levels = max(levels, l+1)
		}
		require.Len(t, d.Phases(), levels, "trial %d", trial)
		var order []string
		for l := range levels {
			for _, task := range p.Tasks {
				if want[task.ID] == l {
					order = append(order, task.ID)
				}
			}
		}
		require.Equal(t, order, d.Order(), "trial %d: by level, source order within one", trial)

		for i, task := range p.Tasks {
			require.Equal(t, want[task.ID], d.Level(i), "trial %d task %s", trial, task.ID)
			var deps []int
			for _, dep := range task.DependsOn {
				j, _ := d.Index(dep)
				if !slices.Contains(deps, j) {
					deps = append(deps, j)
				}
			}
			if deps == nil {
				deps = []int{}
			}
			require.Equal(t, deps, d.Deps(i), "trial %d", trial)
			for _, j := range d.Deps(i) {
				require.Contains(t, d.Dependents(j), i)
				require.True(t, d.HasEdgeFromTo(int64(j), int64(i)))
			}
			require.Equal(t, len(d.Dependents(i)) == 0, slices.Contains(d.Sinks(), task.ID))
		}
	}
}

func TestDAGConcurrentUse(t *testing.T) {
	d := dtMustDAG(t, gtDiamond())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := topo.Sort(d)
			assert.NoError(t, err)
			assert.Equal(t, 4, len(gtIDs(d.Nodes())))
			_ = d.Edges()
			_ = d.Reads(0)
		})
	}
	wg.Wait()
}

// gtCatalog is a host catalog for the tests.
type gtCatalog struct {
	workers map[string][]string
	tools   []string
	asked   map[string]int
}

func (c *gtCatalog) WorkerOutputs(name string) ([]string, bool) {
	if c.asked == nil {
		c.asked = make(map[string]int)
	}
	c.asked[name]++
	slots, ok := c.workers[name]
	return slots, ok
}

func (c *gtCatalog) HasTool(name string) bool { return slices.Contains(c.tools, name) }

func TestWithCatalog(t *testing.T) {
	catalog := func() *gtCatalog {
		return &gtCatalog{
			workers: map[string][]string{"search": {"items", "count"}, "free": nil, "mute": {}},
			tools:   []string{"web", "files"},
		}
	}
	wired := func(agent, slot string) *plan.Plan {
		up := vtTask("up")
		up.Agent = agent
		down := vtTask("down", "up")
		down.Inputs = map[string]plan.InputRef{"in": {From: "up", Slot: slot}}
		return vtPlan(up, down)
	}
	tests := []struct {
		name string
		plan *plan.Plan
		want []vtProblem
	}{
		{"a worker is a known agent", wired("search", "items.0"), nil},
		{"an unknown agent", wired("ghost", "items"), []vtProblem{
			{plan.CodeUnknownAgent, "up", "agent", `agent "ghost" is not defined in the plan's agents and is not a registry worker`},
		}},
		{"an undeclared slot", wired("search", "total"), []vtProblem{
			{plan.CodeUndeclaredSlot, "down", "inputs.in", `input "in" reads slot "total" of "up", but worker "search" declares items, count`},
		}},
		{"nil slots are not checked", wired("free", "anything"), nil},
		{"empty slots declare none", wired("mute", "x"), []vtProblem{
			{plan.CodeUndeclaredSlot, "down", "inputs.in", `input "in" reads slot "x" of "up", but worker "mute" declares no output slots`},
		}},
		{"tools of the catalog", &plan.Plan{
			Agents: map[string]plan.Agent{"writer": {Tools: []string{"web", "files"}}},
			Tasks:  []plan.Task{vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })},
		}, nil},
		{"tools the catalog does not have", &plan.Plan{
			Agents: map[string]plan.Agent{"writer": {Tools: []string{"web", "shell", "mail"}}, "coder": {Tools: []string{"git"}}},
			Tasks:  []plan.Task{vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })},
		}, []vtProblem{
			{plan.CodeUnknownTool, "", "agents.coder.tools", `agent "coder" uses tool "git", which the host's catalog does not have`},
			{plan.CodeUnknownTool, "", "agents.writer.tools", `agent "writer" uses tool "shell", which the host's catalog does not have`},
			{plan.CodeUnknownTool, "", "agents.writer.tools", `agent "writer" uses tool "mail", which the host's catalog does not have`},
		}},
		{"a plan agent with a worker's name", &plan.Plan{
			Agents: map[string]plan.Agent{"search": {Tools: []string{"web"}}},
			Tasks:  []plan.Task{vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "search" })},
		}, []vtProblem{
			{plan.CodeAgentIsWorker, "", "agents.search", `agent "search" is defined by the plan and is also a registry worker; rename the plan's agent`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := catalog()
			d, err := tt.plan.DAG(plan.WithCatalog(cat))
			require.NotNil(t, d, "%v", err)
			assert.Equal(t, tt.want, vtProblems(err))
			for name, n := range cat.asked {
				assert.Equal(t, 1, n, "the catalog is asked about %q once", name)
			}
		})
	}

	t.Run("tools are checked only with a catalog", func(t *testing.T) {
		p := &plan.Plan{
			Agents: map[string]plan.Agent{"writer": {Tools: []string{"shell"}}},
			Tasks:  []plan.Task{vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })},
		}
		assert.NoError(t, p.Validate())
	})
	t.Run("worker options still count beside a catalog", func(t *testing.T) {
		p := wired("other", "total")
		assert.NoError(t, p.Validate(plan.WithCatalog(catalog()), plan.WithWorkers("other")))
		err := p.Validate(plan.WithCatalog(catalog()), plan.WithWorkerOutputs("other", "items"))
		assert.Equal(t, []plan.Code{plan.CodeUndeclaredSlot}, ptCodes(err))
	})
}
