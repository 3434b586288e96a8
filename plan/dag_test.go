package plan_test

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
)

// dtMustDAG builds the plan's DAG and fails the test on any problem.
func dtMustDAG(t *testing.T, p *plan.Plan) *plan.DAG {
	t.Helper()
	d, err := p.DAG()
	require.NoError(t, err)
	require.NotNil(t, d)
	return d
}

// dtCheckOrder fails the test unless order holds every task of p once, each
// after all of its dependencies.
func dtCheckOrder(t *testing.T, p *plan.Plan, order []string) {
	t.Helper()
	require.Len(t, order, len(p.Tasks))
	at := make(map[string]int, len(order))
	for i, id := range order {
		_, dup := at[id]
		require.False(t, dup, "%q twice in the order", id)
		at[id] = i
	}
	for _, task := range p.Tasks {
		i, ok := at[task.ID]
		require.True(t, ok, "%q missing from the order", task.ID)
		for _, dep := range task.DependsOn {
			require.Less(t, at[dep], i, "%q must come before %q", dep, task.ID)
		}
	}
}

// dtCheckPhases fails the test unless phases hold every task once, each task
// one level above its highest dependency (level 0 without dependencies), in
// source order within a phase.
func dtCheckPhases(t *testing.T, p *plan.Plan, phases [][]string) {
	t.Helper()
	level := make(map[string]int, len(p.Tasks))
	for l, phase := range phases {
		require.NotEmpty(t, phase, "phase %d is empty", l)
		for _, id := range phase {
			_, dup := level[id]
			require.False(t, dup, "%q in two phases", id)
			level[id] = l
		}
	}
	require.Len(t, level, len(p.Tasks))
	source := make(map[string]int, len(p.Tasks))
	for i, task := range p.Tasks {
		source[task.ID] = i
		want := 0
		for _, dep := range task.DependsOn {
			want = max(want, level[dep]+1)
		}
		require.Equal(t, want, level[task.ID], "level of %q", task.ID)
	}
	for l, phase := range phases {
		require.True(t, slices.IsSortedFunc(phase, func(a, b string) int { return source[a] - source[b] }),
			"phase %d is not in source order: %q", l, phase)
	}
}

func TestDAGPhasesAndOrder(t *testing.T) {
	fan := []plan.Task{vtTask("root")}
	var leaves []string
	for i := range 50 {
		id := "leaf" + strconv.Itoa(i)
		fan = append(fan, vtTask(id, "root"))
		leaves = append(leaves, id)
	}
	fan = append(fan, vtTask("join", leaves...))

	tests := []struct {
		name   string
		plan   *plan.Plan
		phases [][]string
		order  []string
		edges  [][2]string
	}{
		{
			name:   "single task",
			plan:   vtPlan(vtTask("only")),
			phases: [][]string{{"only"}},
			order:  []string{"only"},
		},
		{
			name:   "independent tasks",
			plan:   vtPlan(vtTask("c"), vtTask("a"), vtTask("b")),
			phases: [][]string{{"c", "a", "b"}},
			order:  []string{"c", "a", "b"},
		},
		{
			name:   "chain",
			plan:   vtPlan(vtTask("a"), vtTask("b", "a"), vtTask("c", "b"), vtTask("d", "c")),
			phases: [][]string{{"a"}, {"b"}, {"c"}, {"d"}},
			order:  []string{"a", "b", "c", "d"},
			edges:  [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}},
		},
		{
			name:   "chain written backwards",
			plan:   vtPlan(vtTask("d", "c"), vtTask("c", "b"), vtTask("b", "a"), vtTask("a")),
			phases: [][]string{{"a"}, {"b"}, {"c"}, {"d"}},
			order:  []string{"a", "b", "c", "d"},
			edges:  [][2]string{{"c", "d"}, {"b", "c"}, {"a", "b"}},
		},
		{
			name:   "diamond",
			plan:   vtPlan(vtTask("fetch"), vtTask("left", "fetch"), vtTask("right", "fetch"), vtTask("merge", "left", "right")),
			phases: [][]string{{"fetch"}, {"left", "right"}, {"merge"}},
			order:  []string{"fetch", "left", "right", "merge"},
			edges:  [][2]string{{"fetch", "left"}, {"fetch", "right"}, {"left", "merge"}, {"right", "merge"}},
		},
		{
			name:   "diamond written out of order",
			plan:   vtPlan(vtTask("merge", "right", "left"), vtTask("right", "fetch"), vtTask("left", "fetch"), vtTask("fetch")),
			phases: [][]string{{"fetch"}, {"right", "left"}, {"merge"}},
			order:  []string{"fetch", "right", "left", "merge"},
			edges:  [][2]string{{"right", "merge"}, {"left", "merge"}, {"fetch", "right"}, {"fetch", "left"}},
		},
		{
			name:   "wide fan-out and fan-in",
			plan:   vtPlan(fan...),
			phases: [][]string{{"root"}, leaves, {"join"}},
			order:  slices.Concat([]string{"root"}, leaves, []string{"join"}),
		},
		{
			name: "level is one more than the highest dependency",
			plan: vtPlan(
				vtTask("a"), vtTask("b", "a"), vtTask("c", "b"),
				vtTask("x", "a", "c"), // level 3 through c, not 1 through a
				vtTask("y"),
				vtTask("z", "y"),
			),
			phases: [][]string{{"a", "y"}, {"b", "z"}, {"c"}, {"x"}},
			order:  []string{"a", "y", "b", "z", "c", "x"},
			edges:  [][2]string{{"a", "b"}, {"b", "c"}, {"a", "x"}, {"c", "x"}, {"y", "z"}},
		},
		{
			name: "source order within a level",
			plan: vtPlan(
				vtTask("write", "research"), vtTask("zeta"), vtTask("research"), vtTask("alpha"), vtTask("edit", "write"), vtTask("notes", "zeta"),
			),
			phases: [][]string{{"zeta", "research", "alpha"}, {"write", "notes"}, {"edit"}},
			order:  []string{"zeta", "research", "alpha", "write", "notes", "edit"},
			edges:  [][2]string{{"research", "write"}, {"write", "edit"}, {"zeta", "notes"}},
		},
		{
			name:   "a dependency listed twice is one edge",
			plan:   vtPlan(vtTask("a"), vtTask("b", "a", "a")),
			phases: [][]string{{"a"}, {"b"}},
			order:  []string{"a", "b"},
			edges:  [][2]string{{"a", "b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dtMustDAG(t, tt.plan)
			assert.Equal(t, tt.phases, d.Phases())
			assert.Equal(t, tt.order, d.Order())
			if tt.edges != nil {
				assert.Equal(t, tt.edges, d.Edges())
			}
			dtCheckOrder(t, tt.plan, d.Order())
			dtCheckPhases(t, tt.plan, d.Phases())
			assert.Same(t, tt.plan, d.Plan())
		})
	}
}

func TestDAGOrderTiesFollowSourceOrder(t *testing.T) {
	// a and b are ready once d is done, then c once a is: b comes before c
	// because it is earlier in the source.
	p := vtPlan(vtTask("a", "d"), vtTask("b", "d"), vtTask("c", "a"), vtTask("d"))
	d := dtMustDAG(t, p)
	assert.Equal(t, []string{"d", "a", "b", "c"}, d.Order())
	assert.Equal(t, [][]string{{"d"}, {"a", "b"}, {"c"}}, d.Phases())
}

func TestDAGRandomPlans(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	for trial := range 300 {
		n := 1 + r.Intn(30)
		// Give each task a random place in the source and let it depend on
		// random tasks of lower rank, so the graph is acyclic.
		place := r.Perm(n)
		tasks := make([]plan.Task, n)
		for rank := range n {
			var deps []string
			for k := range rank {
				if r.Intn(4) == 0 {
					deps = append(deps, "t"+strconv.Itoa(place[k]))
				}
			}
			tasks[place[rank]] = vtTask("t"+strconv.Itoa(place[rank]), deps...)
		}
		p := vtPlan(tasks...)
		require.NoError(t, p.Validate(), "trial %d", trial)
		d := dtMustDAG(t, p)
		dtCheckOrder(t, p, d.Order())
		dtCheckPhases(t, p, d.Phases())
		assert.Equal(t, slices.Concat(d.Phases()...), d.Order(), "trial %d: phase by phase, source order within a phase", trial)

		var edges [][2]string
		for _, task := range p.Tasks {
			for _, dep := range task.DependsOn {
				edges = append(edges, [2]string{dep, task.ID})
			}
		}
		assert.Equal(t, edges, d.Edges(), "trial %d", trial)

		again := dtMustDAG(t, vtPlan(slices.Clone(tasks)...))
		assert.Equal(t, d.Order(), again.Order(), "trial %d: deterministic", trial)
		assert.Equal(t, d.Phases(), again.Phases(), "trial %d: deterministic", trial)
	}
}

func TestDAGIsDeterministic(t *testing.T) {
	build := func() *plan.Plan {
		return vtPlan(
			vtTask("e", "c", "d"), vtTask("b", "a"), vtTask("d", "b"), vtTask("a"),
			vtTask("c", "a"), vtTask("f"), vtTask("g", "f", "a"),
		)
	}
	first := dtMustDAG(t, build())
	for i := range 20 {
		d := dtMustDAG(t, build())
		require.Equal(t, first.Order(), d.Order(), "run %d", i)
		require.Equal(t, first.Phases(), d.Phases(), "run %d", i)
		require.Equal(t, first.Edges(), d.Edges(), "run %d", i)
	}
	assert.Equal(t, [][]string{{"a", "f"}, {"b", "c", "g"}, {"d"}, {"e"}}, first.Phases())
}

func TestDAGEdges(t *testing.T) {
	t.Run("by dependent in source order, then in depends_on order", func(t *testing.T) {
		p := vtPlan(vtTask("c", "b", "a"), vtTask("a"), vtTask("b", "a"))
		assert.Equal(t, [][2]string{{"b", "c"}, {"a", "c"}, {"a", "b"}}, dtMustDAG(t, p).Edges())
	})
	t.Run("no dependencies", func(t *testing.T) {
		assert.Empty(t, dtMustDAG(t, vtPlan(vtTask("a"), vtTask("b"))).Edges())
	})
}

func TestDAGRefusesInvalidStructure(t *testing.T) {
	tests := []struct {
		name  string
		plan  *plan.Plan
		codes []plan.Code
	}{
		{"empty plan", &plan.Plan{}, []plan.Code{plan.CodeEmptyPlan}},
		{"empty id", vtPlan(vtTask("")), []plan.Code{plan.CodeInvalidID}},
		{"duplicate id", vtPlan(vtTask("a"), vtTask("a")), []plan.Code{plan.CodeDuplicateID}},
		{"missing dependency", vtPlan(vtTask("a", "nope")), []plan.Code{plan.CodeMissingDependency}},
		{"self dependency", vtPlan(vtTask("a", "a")), []plan.Code{plan.CodeSelfDependency}},
		{"2-cycle", vtPlan(vtTask("a", "b"), vtTask("b", "a")), []plan.Code{plan.CodeCycle}},
		{"3-cycle", vtPlan(vtTask("a", "c"), vtTask("b", "a"), vtTask("c", "b")), []plan.Code{plan.CodeCycle}},
		{"several at once", vtPlan(vtTask("a", "a"), vtTask("b", "c"), vtTask("c", "b"), vtTask("b", "zz")),
			[]plan.Code{plan.CodeSelfDependency, plan.CodeCycle, plan.CodeDuplicateID, plan.CodeMissingDependency}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.plan.DAG()
			assert.Nil(t, d)
			require.Error(t, err)
			assert.ErrorIs(t, err, plan.ErrInvalid)
			assert.Equal(t, tt.codes, ptCodes(err))
			assert.Equal(t, plan.Problems(tt.plan.Validate()), plan.Problems(err), "the same problems as Validate")
		})
	}
}

func TestDAGContract(t *testing.T) {
	sound := func(mod func(*plan.Task)) *plan.Plan {
		return vtPlan(vtWith(vtTask("a"), mod), vtTask("b", "a"))
	}
	tests := []struct {
		name  string
		plan  *plan.Plan
		opts  []plan.Option
		dag   bool // a DAG is returned
		codes []plan.Code
	}{
		{"valid", sound(func(*plan.Task) {}), nil, true, nil},
		{"unknown agent", sound(func(t *plan.Task) { t.Agent = "ghost" }), nil, true, []plan.Code{plan.CodeUnknownAgent}},
		{"the same agent as a known worker", sound(func(t *plan.Task) { t.Agent = "ghost" }), []plan.Option{plan.WithWorkers("ghost")}, true, nil},
		{"bad type and policy", sound(func(t *plan.Task) { t.Type, t.OnFailure = "bogus", "halt" }), nil, true,
			[]plan.Code{plan.CodeInvalidType, plan.CodeInvalidOnFailure}},
		{"over a limit", sound(func(t *plan.Task) { t.MaxRetries = 1000 }), nil, true, []plan.Code{plan.CodeTooManyRetries}},
		{"too many tasks", sound(func(*plan.Task) {}), []plan.Option{plan.WithLimits(plan.Limits{MaxTasks: 1})}, true, []plan.Code{plan.CodeTooManyTasks}},
		{"template not upstream", sound(func(t *plan.Task) { t.Input = "{{results.b}}" }), nil, true, []plan.Code{plan.CodeTemplateNotUpstream}},
		{"missing dependency", sound(func(t *plan.Task) { t.DependsOn = []string{"zz"} }), nil, false, []plan.Code{plan.CodeMissingDependency}},
		{"cycle and an unknown agent", sound(func(t *plan.Task) { t.DependsOn, t.Agent = []string{"b"}, "ghost" }), nil, false,
			[]plan.Code{plan.CodeCycle, plan.CodeUnknownAgent}},
		{"empty plan", &plan.Plan{}, nil, false, []plan.Code{plan.CodeEmptyPlan}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.plan.DAG(tt.opts...)
			assert.Equal(t, tt.codes, ptCodes(err))
			assert.Equal(t, plan.Problems(tt.plan.Validate(tt.opts...)), plan.Problems(err), "Validate is the error of DAG")
			if tt.codes == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, plan.ErrInvalid)
			}
			if !tt.dag {
				assert.Nil(t, d)
				return
			}
			require.NotNil(t, d)
			assert.Equal(t, err, d.Err(), "Err is the error DAG returned")
			assert.Equal(t, [][]string{{"a"}, {"b"}}, d.Phases(), "a sound structure has its phases")
		})
	}
}

func TestDAGLongChain(t *testing.T) {
	const n = 10_000
	for _, backwards := range []bool{false, true} {
		name := "forwards"
		if backwards {
			name = "backwards"
		}
		t.Run(name, func(t *testing.T) {
			tasks := make([]plan.Task, n)
			for i := range n {
				task := vtTask("t" + strconv.Itoa(i))
				if i > 0 {
					task.DependsOn = []string{"t" + strconv.Itoa(i-1)}
				}
				tasks[i] = task
			}
			if backwards {
				slices.Reverse(tasks)
			}
			p := vtPlan(tasks...)
			require.NoError(t, p.Validate())
			d := dtMustDAG(t, p)
			phases := d.Phases()
			require.Len(t, phases, n)
			order := d.Order()
			require.Len(t, order, n)
			for i := range n {
				require.Equal(t, []string{"t" + strconv.Itoa(i)}, phases[i])
				require.Equal(t, "t"+strconv.Itoa(i), order[i])
			}
			assert.Len(t, d.Edges(), n-1)
			assert.Equal(t, n, d.Nodes().Len())
		})
	}
}

func TestDAGFromParsedPlan(t *testing.T) {
	p := ptMustParse(t, "```json\n"+`{"workflow": {
		"research": [{"id": "web"}, {"id": "papers"}],
		"write": {"depends_on": "research", "tasks": [{"id": "draft"}, {"id": "figures"}]},
		"publish": {"depends_on": ["draft", "figures"], "type": "approval"}
	}}`+"\n```")
	require.NoError(t, p.Validate())
	d := dtMustDAG(t, p)
	assert.Equal(t, [][]string{{"web", "papers"}, {"draft", "figures"}, {"publish"}}, d.Phases())
	assert.Equal(t, plan.TypeHumanReview, p.Tasks[4].Type)
}
