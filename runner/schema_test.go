package runner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

const itemsSchema = `{"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "minItems": 1, "items": {"type": "string"}}}}`

func withSchema(src string) mod {
	return func(t *plan.Task) { t.OutputSchema = json.RawMessage(src) }
}

// The output schema reaches the agent, and an output that does not match
// it fails like a verification: retried with the schema's complaints.
func TestOutputSchema(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(
		output(map[string]any{"items": []any{}}),
		output(map[string]any{"items": []any{1}}),
		output(map[string]any{"items": []any{"x"}}),
	))
	res := run(t, planOf(task("a", "list", withSchema(itemsSchema), retries(2))), rec)
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Tasks["a"].Err)
	assert.Equal(t, 3, res.Tasks["a"].Attempts)
	reqs := rec.requests("a")
	assert.JSONEq(t, itemsSchema, string(reqs[0].OutputSchema))
	assert.Contains(t, reqs[1].Diagnosis, "the output does not match the task's output_schema: at /items: ")
	assert.Contains(t, reqs[2].Diagnosis, "at /items/0: ")
}

func TestOutputSchemaExhausted(t *testing.T) {
	rec := newRecorder().on("a", output("plain text"))
	res := run(t, planOf(task("a", "list", withSchema(itemsSchema), retries(0))), rec)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Tasks["a"].Err, runner.ErrOutputSchema)
}

func TestBadOutputSchemas(t *testing.T) {
	for name, src := range map[string]string{
		"not a schema":      `{"type": 12}`,
		"external ref":      `{"$ref": "https://example.com/schema.json"}`,
		"unknown draft":     `{"$schema": "https://example.com/draft/99", "type": "object"}`,
		"bad regex pattern": `{"type": "string", "pattern": "("}`,
	} {
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			rec := newRecorder()
			_, err := runner.New(runner.WithAgent(worker, rec)).RunPlan(context.Background(), planOf(task("a", "x", withSchema(src))))
			// Plan validation compiles output schemas: the run is refused
			// as a plan with an invalid_field, as dagent lint reports it.
			assert.ErrorIs(t, err, plan.ErrInvalid)
			probs := plan.Problems(err)
			require.Len(t, probs, 1)
			assert.Equal(t, plan.CodeInvalidField, probs[0].Code)
			assert.Equal(t, "a", probs[0].TaskID)
			assert.Equal(t, "output_schema", probs[0].Field)
			assert.Contains(t, probs[0].Message, "output_schema does not compile: ")
			assert.Zero(t, rec.calls.Load())
		})
	}
}
