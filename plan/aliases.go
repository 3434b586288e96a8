package plan

import (
	"slices"
	"strings"
)

// field is a canonical task field.
type field int

const (
	fieldID field = iota
	fieldAgent
	fieldInput
	fieldDependsOn
	fieldType
	fieldOnFailure
	fieldMaxRetries
	fieldCritical
	fieldTimeout
	fieldVerification
	fieldOnVerificationFailure
	fieldInputs
	fieldParams
	fieldOutputSchema
	fieldPriority
	fieldWhen
	fieldRubric
	numFields
)

// taskKeys lists, for each canonical field, the keys that mean it, the
// canonical key first. When a task has several keys for one field, the
// earlier key in this list wins: with both "id" and "name", "name" is a title.
var taskKeys = [numFields][]string{
	fieldID:                    {"id", "step_id", "task_id", "name"},
	fieldAgent:                 {"agent", "worker", "assigned_to"},
	fieldInput:                 {"input", "query", "action", "prompt", "description"},
	fieldDependsOn:             {"depends_on", "requires", "after", "dependencies"},
	fieldType:                  {"type"},
	fieldOnFailure:             {"on_failure"},
	fieldMaxRetries:            {"max_retries", "retries"},
	fieldCritical:              {"critical"},
	fieldTimeout:               {"timeout"},
	fieldVerification:          {"verification"},
	fieldOnVerificationFailure: {"on_verification_failure"},
	fieldInputs:                {"inputs"},
	fieldParams:                {"params", "parameters"},
	fieldOutputSchema:          {"output_schema", "outputSchema", "response_schema", "output_format", "schema"},
	fieldPriority:              {"priority"},
	fieldWhen:                  {"when", "condition", "run_if"},
	fieldRubric:                {"rubric", "judge_rubric"},
}

// objectOnlyKeys are task aliases whose names LLMs also use for other
// things ("output_format": "markdown", "schema": "a list of URLs"). Such a
// key means its field only when its value is an object; otherwise it is an
// unknown key, dropped and recorded, rather than a problem.
var objectOnlyKeys = []string{"output_format", "schema"}

// numberOnlyKeys are task keys that mean their field only when their value
// is a number: LLMs write "priority": "high" as a note to the reader, which
// is no ordering the runner can follow.
var numberOnlyKeys = []string{"priority"}

func (f field) String() string { return taskKeys[f][0] }

type alias struct {
	field field
	rank  int
	key   string
	only  byte // the kind of value the key needs to mean its field; 0: any (see objectOnlyKeys, numberOnlyKeys)
}

// taskAliasesByLen holds every accepted task key with its field and
// priority, by the key's length: every task has a dozen keys, and a short
// scan of equal-length keys is cheaper than hashing each.
var taskAliasesByLen = func() [][]alias {
	var byLen [][]alias
	for f, keys := range taskKeys {
		for rank, k := range keys {
			for len(byLen) <= len(k) {
				byLen = append(byLen, nil)
			}
			a := alias{field: field(f), rank: rank, key: k}
			switch {
			case slices.Contains(objectOnlyKeys, k):
				a.only = '{'
			case slices.Contains(numberOnlyKeys, k):
				a.only = '0'
			}
			byLen[len(k)] = append(byLen[len(k)], a)
		}
	}
	return byLen
}()

// taskAlias looks up a task key.
func taskAlias(name []byte) (alias, bool) {
	if len(name) >= len(taskAliasesByLen) {
		return alias{}, false
	}
	for _, a := range taskAliasesByLen[len(name)] {
		if a.key == string(name) {
			return a, true
		}
	}
	return alias{}, false
}

// Keys of phase objects, agents and the plan itself. The first key of each
// list is canonical; earlier keys win.
var (
	phaseNameKeys   = []string{"name", "id", "phase", "title"}
	phaseTaskKeys   = []string{"tasks", "steps"}
	planTaskKeys    = []string{"tasks", "steps", "workflow", "phases"}
	planAgentKeys   = []string{"agents", "workers"}
	planMissionKeys = []string{"mission", "goal", "objective"}
	agentNameKeys   = []string{"name", "id"}
	agentPromptKeys = []string{"prompt", "system_prompt", "instructions", "description", "role"}
	agentToolKeys   = []string{"tools", "capabilities"}
	inputFromKeys   = []string{"from", "task"}
	inputSlotKeys   = []string{"slot", "path"}
)

// The canonical keys of tasks, phases, agents and the plan: what an
// unknown key is compared with for a suggestion.
var (
	canonicalTaskKeys = func() []string {
		keys := make([]string, numFields)
		for f := range numFields {
			keys[f] = f.String()
		}
		return keys
	}()
	canonicalPhaseKeys = []string{"name", "tasks", "depends_on"}
	canonicalPlanKeys  = []string{"mission", "agents", "tasks"}
	canonicalAgentKeys = []string{"prompt", "description", "tools", "model"}
)

// typeAliases maps normalised type names to task types.
var typeAliases = map[string]TaskType{
	"task":           TypeTask,
	"synthesis_gate": TypeSynthesisGate,
	"gate":           TypeSynthesisGate,
	"synthesis":      TypeSynthesisGate,
	"compress":       TypeSynthesisGate,
	"summarize":      TypeSynthesisGate,
	"human_review":   TypeHumanReview,
	"review":         TypeHumanReview,
	"approval":       TypeHumanReview,
}

// policyAliases maps normalised policy names to policies.
var policyAliases = map[string]Policy{
	"stop":   PolicyStop,
	"halt":   PolicyStop,
	"abort":  PolicyStop,
	"skip":   PolicySkip,
	"ignore": PolicySkip,
	"retry":  PolicyRetry,
	"replan": PolicyReplan,
}

// normalizeName folds "Synthesis Gate", "synthesis-gate" and
// "SYNTHESIS_GATE" to "synthesis_gate".
func normalizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}
