package plan_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
)

func TestParsePriority(t *testing.T) {
	ok := []struct {
		name, value string
		want        int
		unknown     bool // the key is recorded as unknown, not read
	}{
		{"zero", `0`, 0, false},
		{"positive", `5`, 5, false},
		{"negative", `-3`, -3, false},
		{"integral float", `2.0`, 2, false},
		{"exponent", `1e2`, 100, false},
		{"int32 bounds", `-2147483648`, -2147483648, false},
		{"null", `null`, 0, false},
		{"a word is a note", `"high"`, 0, true},
		{"a numeral string is a note too", `"2"`, 0, true},
		{"a list is a note", `[1]`, 0, true},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Parse([]byte(`{"tasks": [{"id": "a", "priority": ` + tt.value + `}]}`))
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Tasks[0].Priority)
			if tt.unknown {
				require.Len(t, p.Unknown, 1)
				assert.Equal(t, "priority", p.Unknown[0].Key)
			} else {
				assert.Empty(t, p.Unknown)
			}
		})
	}

	for _, value := range []string{`1.5`, `1e20`, `2147483648`, `-2147483649`} {
		t.Run("invalid "+value, func(t *testing.T) {
			src := `{"tasks": [{"id": "a", "priority": ` + value + `}]}`
			p, err := plan.Parse([]byte(src))
			ps := plan.Problems(err)
			require.Len(t, ps, 1, "%v", err)
			assert.Equal(t, plan.Problem{
				Code: plan.CodeInvalidField, TaskID: "a", Field: "priority",
				Message: "priority must be an integer, found " + value, Pos: ptPos(t, src, value),
			}, *ps[0])
			require.NotNil(t, p)
			assert.Zero(t, p.Tasks[0].Priority)
		})
	}
}

func TestPriorityCanonical(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"default left out", `{"tasks": [{"id": "a"}]}`, ``},
		{"kept", `{"tasks": [{"id": "a", "priority": 7}]}`, `,"priority":7`},
		{"negative kept", `{"tasks": [{"id": "a", "priority": -1.0}]}`, `,"priority":-1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Parse([]byte(tt.src))
			require.NoError(t, err)
			data, err := json.Marshal(p.Tasks[0])
			require.NoError(t, err)
			assert.JSONEq(t, `{"id":"a","agent":"default","input":"","depends_on":[],"type":"task","on_failure":"stop","max_retries":2,"critical":true,"on_verification_failure":"retry"`+tt.want+`}`, string(data))
			again, err := plan.Parse([]byte(`{"tasks": [` + string(data) + `]}`))
			require.NoError(t, err)
			assert.Equal(t, p.Tasks[0].Priority, again.Tasks[0].Priority, "the canonical form parses back")
		})
	}
}
