package plan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
)

const schemaID = "https://github.com/dagent-dev/dagent/plan.schema.json"

// compileSchema compiles plan.Schema(), or the subschema at fragment (e.g.
// "/$defs/Task"), with every assertion the library can make.
func compileSchema(t testing.TB, fragment string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(plan.Schema()))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	c.AssertVocabs()
	require.NoError(t, c.AddResource(schemaID, doc))
	loc := schemaID
	if fragment != "" {
		loc += "#" + fragment
	}
	sch, err := c.Compile(loc)
	require.NoError(t, err)
	return sch
}

// schemaValidate checks a JSON document against a compiled schema.
func schemaValidate(t testing.TB, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err, "test document is not JSON: %s", doc)
	return sch.Validate(inst)
}

// schemaDoc is the schema as plain JSON values, for inspecting it.
func schemaDoc(t testing.TB) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(plan.Schema(), &doc))
	return doc
}

// schemaDef returns the definition named name, or the root schema for "".
func schemaDef(t testing.TB, doc map[string]any, name string) map[string]any {
	t.Helper()
	if name == "" {
		return doc
	}
	d, ok := doc["$defs"].(map[string]any)[name].(map[string]any)
	require.True(t, ok, "no $defs/%s", name)
	return d
}

func schemaProps(t testing.TB, d map[string]any) map[string]any {
	t.Helper()
	props, ok := d["properties"].(map[string]any)
	require.True(t, ok, "schema has no properties")
	return props
}

func schemaSortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func TestSchemaCompiles(t *testing.T) {
	sch := compileSchema(t, "")
	assert.Equal(t, 2020, sch.DraftVersion)
	assert.Equal(t, schemaID, sch.ID)
	assert.NotEmpty(t, sch.Title)
	assert.NotEmpty(t, sch.Description)
	assert.Equal(t, []string{"tasks"}, sch.Required)
	assert.Equal(t, false, sch.AdditionalProperties)

	doc := schemaDoc(t)
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])
	assert.Equal(t, schemaID, doc["$id"])

	for _, name := range []string{"Agent", "Task", "InputRef", "TaskID", "TaskType", "Policy", "Duration"} {
		t.Run(name, func(t *testing.T) {
			sub := compileSchema(t, "/$defs/"+name)
			assert.NotEmpty(t, sub.Title)
			assert.NotEmpty(t, sub.Description)
		})
	}
}

// TestSchemaDescriptions checks that every property and definition says what
// it is for: the schema is read by LLMs.
func TestSchemaDescriptions(t *testing.T) {
	doc := schemaDoc(t)
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for _, name := range schemaSortedKeys(props) {
			p := props[name].(map[string]any)
			desc, _ := p["description"].(string)
			assert.GreaterOrEqual(t, len(desc), 20, "%s/properties/%s needs a description", path, name)
			walk(path+"/properties/"+name, p)
		}
	}
	walk("", doc)
	defs := doc["$defs"].(map[string]any)
	for _, name := range schemaSortedKeys(defs) {
		d := defs[name].(map[string]any)
		assert.NotEmpty(t, d["description"], "$defs/%s needs a description", name)
		walk("/$defs/"+name, d)
	}
}

// schemaFullAgent, schemaFullInputRef, schemaFullTask and schemaFullPlan set
// every canonical field, so that their JSON holds every key the canonical
// form can write.
func schemaFullAgent() plan.Agent {
	return plan.Agent{
		Prompt:      "You research companies and answer with JSON only.",
		Description: "web researcher",
		Tools:       []string{"web_search", "fetch_page"},
		Model:       "gpt-4o",
	}
}

func schemaFullInputRef() plan.InputRef {
	return plan.InputRef{From: "seed", Slot: "items.0"}
}

func schemaFullTask() plan.Task {
	tk := plan.NewTask("fetch", "Fetch every source in {{results.seed.items}}.")
	tk.Agent = "researcher"
	tk.DependsOn = []string{"seed"}
	tk.When = `(not-empty (get data/depends "seed"))`
	tk.Type = plan.TypeSynthesisGate
	tk.OnFailure = plan.PolicyReplan
	tk.MaxRetries = 3
	tk.Critical = true
	tk.Timeout = 90 * time.Second
	tk.Verification = `(> (count (get data/result "items")) 0)`
	tk.OnVerificationFailure = plan.PolicySkip
	tk.Inputs = map[string]plan.InputRef{"sources": schemaFullInputRef()}
	tk.Params = map[string]any{"depth": json.Number("2"), "lang": "en", "flags": []any{true, nil}}
	tk.OutputSchema = json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"}}},"required":["items"]}`)
	tk.Priority = 3
	tk.Rubric = "Every item is a source about the mission, not a search page."
	tk.Pos = plan.Position{Line: 7, Column: 5}
	return tk
}

func schemaFullPlan() plan.Plan {
	return plan.Plan{
		Mission: "Brief the team on our competitors",
		Agents:  map[string]plan.Agent{"researcher": schemaFullAgent()},
		Tasks:   []plan.Task{plan.NewTask("seed", "List the sources."), schemaFullTask()},
		Unknown: []plan.UnknownKey{{Key: "temperature"}},
	}
}

// schemaNonCanonical lists the exported fields that the canonical JSON leaves
// out on purpose, by type.
var schemaNonCanonical = map[reflect.Type][]string{
	reflect.TypeFor[plan.Task](): {"Pos"},     // where the task was parsed
	reflect.TypeFor[plan.Plan](): {"Unknown"}, // keys Parse dropped
}

// schemaKeys derives the JSON keys of a Go type from its exported
// fields: the json tag's name, or the field name in snake case for types
// that marshal through a mirror struct (Task).
func schemaKeys(typ reflect.Type) []string {
	var keys []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || slices.Contains(schemaNonCanonical[typ], f.Name) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = schemaSnake(f.Name)
		}
		keys = append(keys, name)
	}
	slices.Sort(keys)
	return keys
}

// schemaSnake turns a Go field name into its snake-case key: DependsOn →
// depends_on, ID → id.
func schemaSnake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// TestSchemaMatchesTypes checks that the schema's properties are exactly the
// keys the Go types marshal to, and that a fully populated value of each type
// is valid: adding a field to a type and not to the schema (or to the
// canonical JSON) fails here.
func TestSchemaMatchesTypes(t *testing.T) {
	doc := schemaDoc(t)
	tests := []struct {
		def   string // "" for the plan itself
		value any
	}{
		{"", schemaFullPlan()},
		{"Agent", schemaFullAgent()},
		{"Task", schemaFullTask()},
		{"InputRef", schemaFullInputRef()},
	}
	for _, tt := range tests {
		typ := reflect.TypeOf(tt.value)
		t.Run(typ.Name(), func(t *testing.T) {
			// The fixture sets every field, or its key would be missing from
			// the JSON below.
			v := reflect.ValueOf(tt.value)
			for i := range typ.NumField() {
				f := typ.Field(i)
				if f.IsExported() && !slices.Contains(schemaNonCanonical[typ], f.Name) {
					assert.False(t, v.Field(i).IsZero(), "the test fixture must set %s.%s", typ.Name(), f.Name)
				}
			}

			want := schemaKeys(typ)
			assert.Equal(t, want, schemaSortedKeys(schemaProps(t, schemaDef(t, doc, tt.def))), "schema properties vs fields of %s", typ)

			data, err := json.Marshal(tt.value)
			require.NoError(t, err)
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(data, &got))
			assert.Equal(t, want, schemaSortedKeys(got), "JSON keys vs fields of %s", typ)

			fragment := ""
			if tt.def != "" {
				fragment = "/$defs/" + tt.def
			}
			assert.NoError(t, schemaValidate(t, compileSchema(t, fragment), data))
		})
	}
}

// TestSchemaDefaults checks that the defaults the schema states are the
// ones Parse applies, and that its enums and bounds are those of the package.
func TestSchemaDefaults(t *testing.T) {
	doc := schemaDoc(t)
	props := schemaProps(t, schemaDef(t, doc, "Task"))

	data, err := json.Marshal(plan.NewTask("x", ""))
	require.NoError(t, err)
	var defaults map[string]any
	require.NoError(t, json.Unmarshal(data, &defaults))
	delete(defaults, "id")
	for _, key := range schemaSortedKeys(defaults) {
		assert.Equal(t, defaults[key], props[key].(map[string]any)["default"], "default of %s", key)
	}
	for _, key := range schemaSortedKeys(props) {
		if _, ok := props[key].(map[string]any)["default"]; ok {
			assert.Contains(t, defaults, key, "the schema states a default for %s, which the canonical JSON leaves out", key)
		}
	}

	// Parse applies the same defaults to a task that gives only its id.
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "x"}]}`))
	require.NoError(t, err)
	assert.Equal(t, plan.NewTask("x", ""), schemaWithoutPos(p.Tasks[0]))

	enum := func(name string) []any { return schemaDef(t, doc, name)["enum"].([]any) }
	var types, policies []any
	for _, v := range plan.TaskTypes {
		types = append(types, string(v))
	}
	for _, v := range plan.Policies {
		policies = append(policies, string(v))
	}
	assert.Equal(t, types, enum("TaskType"))
	assert.Equal(t, policies, enum("Policy"))

	retries := props["max_retries"].(map[string]any)
	assert.EqualValues(t, 0, retries["minimum"])
	assert.EqualValues(t, plan.DefaultLimits().MaxRetries, retries["maximum"])
}

func schemaWithoutPos(tk plan.Task) plan.Task {
	tk.Pos = plan.Position{}
	return tk
}

// TestSchemaAcceptsCanonical parses plans the way LLMs write them and checks
// that their canonical JSON is valid.
func TestSchemaAcceptsCanonical(t *testing.T) {
	sch := compileSchema(t, "")
	tests := []struct {
		name string
		src  string
	}{
		{"bare strings", `{"tasks": ["Find the three closest competitors", "Summarise them"]}`},
		{"list of tasks", `[{"id": 1, "input": "Search"}, {"id": 2, "input": "Summarise", "depends_on": 1}]`},
		{"every field, canonical keys", `{
			"mission": "Brief the product team on our competitors",
			"agents": {
				"researcher": {"prompt": "You research.", "description": "web research", "tools": ["web_search", "fetch_page"], "model": "gpt-4o"},
				"writer": "You write crisp briefs."
			},
			"tasks": [
				{"id": "competitors", "agent": "researcher", "input": "List three competitors as {\"items\": [...]}",
				 "on_failure": "retry", "max_retries": 3, "timeout": "2m", "critical": true,
				 "verification": "(= (count (get data/result \"items\")) 3)", "on_verification_failure": "retry",
				 "output_schema": {"type": "object", "properties": {"items": {"type": "array", "maxItems": 3,}}, "required": ["items"],}},
				{"id": "pricing", "agent": "researcher", "input": "Pricing of {{results.competitors.items}}",
				 "depends_on": ["competitors"], "type": "task", "on_failure": "skip", "max_retries": 0,
				 "critical": false, "timeout": "1h30m", "on_verification_failure": "stop",
				 "inputs": {"companies": {"from": "competitors", "slot": "items"}, "all": {"from": "competitors"}},
				 "params": {"currency": "EUR", "limit": 10, "precise": 0.30000000000000004, "nested": {"a": [1, null, true]}}},
				{"id": "synthesis", "type": "synthesis_gate", "agent": "writer", "input": "Merge {{results.pricing}}",
				 "depends_on": ["pricing"], "on_failure": "replan", "timeout": "1.5s"},
				{"id": "approve", "type": "human_review", "input": "Check it", "depends_on": ["synthesis"], "timeout": "500ms"}
			]
		}`},
		{"aliases in a code fence", "Here is the plan:\n```json\n" + `{
			"goal": "Answer a question",
			"workers": [{"name": "analyst", "system_prompt": "You analyse.", "capabilities": "calc", "model": " small "}],
			"steps": [
				{"step_id": "a", "worker": "analyst", "query": "Gather facts", "retries": "4", "on_failure": "Halt", "timeout": "90 seconds"},
				{"task_id": "b", "assigned_to": "analyst", "prompt": "Use {{results.a}}", "requires": "a",
				 "type": "Synthesis Gate", "on_verification_failure": "REPLAN", "critical": "false",
				 "inputs": {"facts": "a.facts.list", "raw": {"task": "a", "path": "raw"}}, "parameters": {"k": 1},
				 "response_schema": {"type": "object"}, "output_format": "markdown"},
				{"name": "c", "action": "Review", "after": ["b", "b"], "type": "approval", "timeout": "2 min", "temperature": 0.2}
			]
		}` + "\n```\nLet me know."},
		{"phases", `{
			"workflow": {
				"gather": [{"id": "web", "input": "Search the web"}, {"id": "docs", "input": "Search the docs"}],
				"report": {"depends_on": "gather", "tasks": [
					{"id": "draft", "input": "Draft from {{results.web}} and {{results.docs}}"},
					{"id": "polish", "input": "Polish", "depends_on": ["draft"], "timeout": "45s"}
				]}
			}
		}`},
		{"phase list", `{"phases": [
			{"name": "one", "steps": ["first", "second"]},
			{"name": "two", "dependencies": ["one"], "steps": [{"id": "3.1", "input": "third", "max_retries": 100, "timeout": "0.25ms"}]}
		]}`},
		{"odd ids and durations", `{"tasks": [
			{"id": "  spaced id  ", "input": 42, "timeout": "100ns"},
			{"id": "ünïcödé/ids:ok", "depends_on": "spaced id", "timeout": "2500us"},
			{"id": "x", "depends_on": ["ünïcödé/ids:ok", ""], "timeout": "3µs", "verification": "  true  "}
		]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Parse([]byte(tt.src))
			require.NoError(t, err)
			// Tasks may name "analyst" as a registry worker unless the
			// plan defines it.
			var opts []plan.Option
			if _, defined := p.Agents["analyst"]; !defined {
				opts = append(opts, plan.WithWorkers("analyst"))
			}
			require.NoError(t, p.Validate(opts...), "the test plans must be valid")
			out, err := p.Canonical()
			require.NoError(t, err)
			assert.NoError(t, schemaValidate(t, sch, out), "%s", out)

			compact, err := json.Marshal(p)
			require.NoError(t, err)
			assert.NoError(t, schemaValidate(t, sch, compact), "%s", compact)
		})
	}

	t.Run("built in Go", func(t *testing.T) {
		p := schemaFullPlan()
		require.NoError(t, p.Validate())
		out, err := p.Canonical()
		require.NoError(t, err)
		assert.NoError(t, schemaValidate(t, sch, out), "%s", out)
	})
}

// schemaRejectedBy says who, besides the schema, rejects a document.
type schemaRejectedBy int

const (
	// schemaLenient: Parse accepts the document and Validate the plan it reads:
	// an alias, a shape LLMs write, or something Parse repairs.
	schemaLenient schemaRejectedBy = iota
	// schemaByParse: Parse rejects it with the code.
	schemaByParse
	// schemaByValidate: Parse accepts it, Validate rejects the plan with the code.
	schemaByValidate
)

// TestSchemaRejects checks documents that are not canonical plans. Each
// holds one fault; at is the JSON pointer of the value at fault, where every
// validation error must point.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t, "")
	tests := []struct {
		name    string
		doc     string
		at      string
		by      schemaRejectedBy
		code    plan.Code
		unknown string // for lenient documents, a key Parse reports as unknown
	}{
		// Enums.
		{"unknown task type", `{"tasks": [{"id": "a", "type": "subtask"}]}`, "/tasks/0/type", schemaByParse, plan.CodeInvalidType, ""},
		{"task type not a string", `{"tasks": [{"id": "a", "type": 1}]}`, "/tasks/0/type", schemaByParse, plan.CodeInvalidType, ""},
		{"unknown on_failure", `{"tasks": [{"id": "a", "on_failure": "explode"}]}`, "/tasks/0/on_failure", schemaByParse, plan.CodeInvalidOnFailure, ""},
		{"unknown on_verification_failure", `{"tasks": [{"id": "a", "on_verification_failure": "panic"}]}`, "/tasks/0/on_verification_failure", schemaByParse, plan.CodeInvalidOnVerificationFailure, ""},
		{"type alias", `{"tasks": [{"id": "a", "type": "gate"}]}`, "/tasks/0/type", schemaLenient, "", ""},
		{"type not normalised", `{"tasks": [{"id": "a", "type": "Human Review"}]}`, "/tasks/0/type", schemaLenient, "", ""},
		{"policy alias", `{"tasks": [{"id": "a", "on_failure": "halt"}]}`, "/tasks/0/on_failure", schemaLenient, "", ""},

		// max_retries.
		{"negative max_retries", `{"tasks": [{"id": "a", "max_retries": -1}]}`, "/tasks/0/max_retries", schemaByParse, plan.CodeInvalidMaxRetries, ""},
		{"fractional max_retries", `{"tasks": [{"id": "a", "max_retries": 1.5}]}`, "/tasks/0/max_retries", schemaByParse, plan.CodeInvalidMaxRetries, ""},
		{"max_retries a word", `{"tasks": [{"id": "a", "max_retries": "many"}]}`, "/tasks/0/max_retries", schemaByParse, plan.CodeInvalidMaxRetries, ""},
		{"max_retries over the limit", `{"tasks": [{"id": "a", "max_retries": 101}]}`, "/tasks/0/max_retries", schemaByValidate, plan.CodeTooManyRetries, ""},
		{"max_retries as a string", `{"tasks": [{"id": "a", "max_retries": "3"}]}`, "/tasks/0/max_retries", schemaLenient, "", ""},

		// timeout.
		{"timeout without unit", `{"tasks": [{"id": "a", "timeout": "30"}]}`, "/tasks/0/timeout", schemaByParse, plan.CodeInvalidTimeout, ""},
		{"timeout in words", `{"tasks": [{"id": "a", "timeout": "soon"}]}`, "/tasks/0/timeout", schemaByParse, plan.CodeInvalidTimeout, ""},
		{"timeout a number", `{"tasks": [{"id": "a", "timeout": 30}]}`, "/tasks/0/timeout", schemaByParse, plan.CodeInvalidTimeout, ""},
		{"negative timeout", `{"tasks": [{"id": "a", "timeout": "-5s"}]}`, "/tasks/0/timeout", schemaByParse, plan.CodeInvalidTimeout, ""},
		{"timeout with a unit word", `{"tasks": [{"id": "a", "timeout": "30 seconds"}]}`, "/tasks/0/timeout", schemaLenient, "", ""},

		// id.
		{"missing id", `{"tasks": [{"input": "x"}]}`, "/tasks/0", schemaLenient, "", ""},
		{"empty id", `{"tasks": [{"id": ""}]}`, "/tasks/0/id", schemaLenient, "", ""},
		{"id with leading space", `{"tasks": [{"id": " a"}]}`, "/tasks/0/id", schemaLenient, "", ""},
		{"id with a control character", `{"tasks": [{"id": "a\u0007b"}]}`, "/tasks/0/id", schemaByValidate, plan.CodeInvalidID, ""},
		{"id a number", `{"tasks": [{"id": 1}]}`, "/tasks/0/id", schemaLenient, "", ""},

		// Unknown keys and aliases of keys.
		{"unknown key on a task", `{"tasks": [{"id": "a", "depend_on": ["b"]}]}`, "/tasks/0", schemaLenient, "", "depend_on"},
		{"key alias on a task", `{"tasks": [{"id": "a", "requires": []}]}`, "/tasks/0", schemaLenient, "", ""},
		{"unknown key at top level", `{"tasks": [{"id": "a"}], "version": 2}`, "", schemaLenient, "", "version"},
		{"task list alias", `{"steps": [{"id": "a"}]}`, "", schemaLenient, "", ""},
		{"unknown key on an agent", `{"agents": {"w": {"prompt": "p", "temperature": 0.2}}, "tasks": [{"id": "a", "agent": "w"}]}`, "/agents/w", schemaLenient, "", "agents.w.temperature"},
		{"unknown key on an input", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"], "inputs": {"x": {"from": "a", "path": "p"}}}]}`, "/tasks/1/inputs/x", schemaLenient, "", ""},

		// tasks.
		{"empty tasks", `{"tasks": []}`, "/tasks", schemaByValidate, plan.CodeEmptyPlan, ""},
		{"no tasks", `{"mission": "m"}`, "", schemaByParse, plan.CodeMissingTasks, ""},
		{"tasks not an array", `{"tasks": "a"}`, "/tasks", schemaByParse, plan.CodeInvalidField, ""},
		{"task a string", `{"tasks": ["Do it"]}`, "/tasks/0", schemaLenient, "", ""},
		{"plan an array", `[{"id": "a"}]`, "", schemaLenient, "", ""},

		// inputs.
		{"inputs without from", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"], "inputs": {"x": {"slot": "items"}}}]}`, "/tasks/1/inputs/x", schemaByParse, plan.CodeInvalidField, ""},
		{"inputs with empty from", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"], "inputs": {"x": {"from": ""}}}]}`, "/tasks/1/inputs/x/from", schemaByParse, plan.CodeInvalidField, ""},
		{"inputs slot not a string", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"], "inputs": {"x": {"from": "a", "slot": 1}}}]}`, "/tasks/1/inputs/x/slot", schemaByParse, plan.CodeInvalidField, ""},
		{"inputs shorthand", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a"], "inputs": {"x": "a.items"}}]}`, "/tasks/1/inputs/x", schemaLenient, "", ""},
		{"inputs an array", `{"tasks": [{"id": "a", "inputs": [{"from": "b"}]}]}`, "/tasks/0/inputs", schemaByParse, plan.CodeInvalidField, ""},

		// depends_on.
		{"depends_on objects", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": [{"id": "a"}]}]}`, "/tasks/1/depends_on/0", schemaByParse, plan.CodeInvalidField, ""},
		{"depends_on an object", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": {"a": true}}]}`, "/tasks/1/depends_on", schemaByParse, plan.CodeInvalidField, ""},
		{"depends_on a string", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": "a"}]}`, "/tasks/1/depends_on", schemaLenient, "", ""},
		{"depends_on numbers", `{"tasks": [{"id": "1"}, {"id": "b", "depends_on": [1]}]}`, "/tasks/1/depends_on/0", schemaLenient, "", ""},
		{"depends_on empty name", `{"tasks": [{"id": "a", "depends_on": [""]}]}`, "/tasks/0/depends_on/0", schemaLenient, "", ""},
		{"depends_on twice the same", `{"tasks": [{"id": "a"}, {"id": "b", "depends_on": ["a", "a"]}]}`, "/tasks/1/depends_on", schemaLenient, "", ""},

		// Other fields of the wrong kind.
		{"input an object", `{"tasks": [{"id": "a", "input": {"q": 1}}]}`, "/tasks/0/input", schemaByParse, plan.CodeInvalidField, ""},
		{"input a number", `{"tasks": [{"id": "a", "input": 42}]}`, "/tasks/0/input", schemaLenient, "", ""},
		{"params an array", `{"tasks": [{"id": "a", "params": [1]}]}`, "/tasks/0/params", schemaByParse, plan.CodeInvalidField, ""},
		{"output_schema an array", `{"tasks": [{"id": "a", "output_schema": [{"type": "string"}]}]}`, "/tasks/0/output_schema", schemaByParse, plan.CodeInvalidField, ""},
		{"output_schema a string", `{"tasks": [{"id": "a", "output_schema": "{\"type\": \"object\"}"}]}`, "/tasks/0/output_schema", schemaByParse, plan.CodeInvalidField, ""},
		{"output_schema alias", `{"tasks": [{"id": "a", "outputSchema": {"type": "object"}}]}`, "/tasks/0", schemaLenient, "", ""},
		{"output_format a word", `{"tasks": [{"id": "a", "output_format": "markdown"}]}`, "/tasks/0", schemaLenient, "", "output_format"},
		{"critical a string", `{"tasks": [{"id": "a", "critical": "false"}]}`, "/tasks/0/critical", schemaLenient, "", ""},
		{"empty agent", `{"tasks": [{"id": "a", "agent": ""}]}`, "/tasks/0/agent", schemaLenient, "", ""},
		{"agent a prompt string", `{"agents": {"w": "You write."}, "tasks": [{"id": "a", "agent": "w"}]}`, "/agents/w", schemaLenient, "", ""},
		{"agent tools a string", `{"agents": {"w": {"tools": "search"}}, "tasks": [{"id": "a", "agent": "w"}]}`, "/agents/w/tools", schemaLenient, "", ""},
		{"agent tools twice the same", `{"agents": {"w": {"tools": ["s", "s"]}}, "tasks": [{"id": "a", "agent": "w"}]}`, "/agents/w/tools", schemaLenient, "", ""},
		{"agents an array", `{"agents": [{"name": "w", "prompt": "p"}], "tasks": [{"id": "a", "agent": "w"}]}`, "/agents", schemaLenient, "", ""},
		{"mission not a string", `{"mission": ["a", "b"], "tasks": [{"id": "a"}]}`, "/mission", schemaByParse, plan.CodeInvalidField, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schemaValidate(t, sch, []byte(tt.doc))
			require.Error(t, err, "the schema accepts %s", tt.doc)
			var verr *jsonschema.ValidationError
			require.ErrorAs(t, err, &verr)
			for _, at := range schemaLeafLocations(verr) {
				assert.Equal(t, tt.at, at, "%v", err)
			}

			p, err := plan.Parse([]byte(tt.doc))
			switch tt.by {
			case schemaByParse:
				schemaRequireCode(t, err, tt.code)
			case schemaByValidate:
				require.NoError(t, err)
				schemaRequireCode(t, p.Validate(), tt.code)
			case schemaLenient:
				require.NoError(t, err)
				require.NoError(t, p.Validate(plan.WithWorkers("default")))
				if tt.unknown != "" {
					var keys []string
					for _, u := range p.Unknown {
						keys = append(keys, u.Key)
					}
					assert.Contains(t, keys, tt.unknown)
				}
				// What Parse makes of it is canonical.
				out, err := p.Canonical()
				require.NoError(t, err)
				assert.NoError(t, schemaValidate(t, sch, out), "%s", out)
			}
		})
	}
}

func schemaRequireCode(t *testing.T, err error, code plan.Code) {
	t.Helper()
	require.ErrorIs(t, err, plan.ErrInvalid)
	var perr *plan.Error
	require.ErrorAs(t, err, &perr)
	assert.True(t, perr.Has(code), "want %s, got %v", code, err)
}

// schemaLeafLocations returns the JSON pointers of the values the innermost
// validation errors are about.
func schemaLeafLocations(err *jsonschema.ValidationError) []string {
	if len(err.Causes) == 0 {
		var b strings.Builder
		for _, tok := range err.InstanceLocation {
			b.WriteString("/")
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
		}
		return []string{b.String()}
	}
	var out []string
	for _, c := range err.Causes {
		out = append(out, schemaLeafLocations(c)...)
	}
	return out
}

// TestSchemaTimeoutPattern checks the timeout pattern against the durations
// time.Duration.String writes and the parser reads.
func TestSchemaTimeoutPattern(t *testing.T) {
	sch := compileSchema(t, "/$defs/Duration")
	check := func(t *testing.T, s string) error {
		t.Helper()
		doc, err := json.Marshal(s)
		require.NoError(t, err)
		return schemaValidate(t, sch, doc)
	}
	parse := func(t *testing.T, s string) (time.Duration, error) {
		t.Helper()
		doc, err := json.Marshal(map[string]any{"tasks": []any{map[string]any{"id": "a", "timeout": s}}})
		require.NoError(t, err)
		p, err := plan.Parse(doc)
		if err != nil {
			return 0, err
		}
		return p.Tasks[0].Timeout, nil
	}

	t.Run("String", func(t *testing.T) {
		var ds []time.Duration
		for d := time.Duration(1); d > 0 && d < 1<<62; d = d*7 + 3 {
			ds = append(ds, d, d.Truncate(time.Second), d.Truncate(time.Millisecond), d.Round(time.Hour))
		}
		ds = append(ds, 0, 30*time.Second, 90*time.Second, 500*time.Millisecond, time.Hour, 1500*time.Millisecond,
			2*time.Microsecond, 100, 1<<63-1)
		for _, d := range ds {
			s := d.String()
			assert.NoError(t, check(t, s), "%s", s)
			got, err := parse(t, s)
			if assert.NoError(t, err, "%s", s) {
				assert.Equal(t, d, got, "%s", s)
			}
		}
	})

	tests := []struct {
		s     string
		valid bool
	}{
		{"30s", true},
		{"1m30s", true},
		{"500ms", true},
		{"1h0m0s", true},
		{"1.5s", true},
		{"2µs", true}, // U+00B5, as String writes it
		{"2μs", true}, // U+03BC
		{"2us", true},
		{"100ns", true},
		{"2m", true},
		{"1h30m", true},
		{"1.5h", true},
		{"0s", true},
		{"30", false},
		{"soon", false},
		{"-5s", false},
		{"+5s", false},
		{"30 seconds", false},
		{"30 s", false},
		{" 30s", false},
		{"", false},
		{"s", false},
		{".5s", false},
		{"5.s", false},
		{"1e3s", false},
		{"5S", false},
		{"5d", false},
		{"P1D", false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			err := check(t, tt.s)
			if !tt.valid {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			want, err := time.ParseDuration(tt.s)
			require.NoError(t, err)
			got, err := parse(t, tt.s)
			require.NoError(t, err, "the schema accepts %q, the parser must too", tt.s)
			assert.Equal(t, want, got)
		})
	}
}

// TestSchemaTaskIDPattern checks that the schema accepts exactly the ids
// Validate accepts: no leading or trailing white space, no control
// characters.
func TestSchemaTaskIDPattern(t *testing.T) {
	doc := schemaDoc(t)
	pattern := regexp.MustCompile(schemaDef(t, doc, "TaskID")["pattern"].(string))
	sch := compileSchema(t, "/$defs/TaskID")

	validateAccepts := func(id string) bool {
		p := plan.Plan{Tasks: []plan.Task{plan.NewTask(id, "")}}
		var perr *plan.Error
		if err := p.Validate(); errors.As(err, &perr) {
			return !perr.Has(plan.CodeInvalidID)
		}
		return true
	}
	runes := []rune{0xfeff, 0xfffd, 0x1f600, utf8.MaxRune}
	for r := rune(0); r < 0x3100; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		runes = append(runes, r)
	}
	for _, r := range runes {
		for _, id := range []string{string(r), string(r) + "a", "a" + string(r), "a" + string(r) + "b"} {
			want := validateAccepts(id)
			if !assert.Equal(t, want, pattern.MatchString(id), "id %q", id) {
				continue
			}
			if r < 0x100 || unicode.IsSpace(r) { // the library's engine too, where it matters
				data, err := json.Marshal(id)
				require.NoError(t, err)
				assert.Equal(t, want, schemaValidate(t, sch, data) == nil, "id %q", id)
			}
		}
	}
	assert.False(t, pattern.MatchString(""))
}
