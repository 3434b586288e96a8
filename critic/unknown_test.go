package critic_test

import (
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownKeyIsParseSuggestion checks that unknown_key says what Parse
// recorded, so that lint and the other commands never disagree on a near
// miss: a phase's misspelt depends_on is one, a shadowed alias is none.
func TestUnknownKeyIsParseSuggestion(t *testing.T) {
	src := []byte(`{"phases": [
  {"name": "p", "tasks": [{"id": "a", "input": "x", "outputSchema": {}, "output_schema": {}}]},
  {"name": "q", "depend_on": "p", "tasks": [{"id": "b", "input": "y", "timout": "1s"}]}
]}`)
	p, err := plan.Parse(src)
	require.NoError(t, err)
	issues := issuesOf(critic.Review(p), critic.CheckUnknownKey)
	require.Len(t, issues, len(p.Unknown))
	byKey := make(map[string]critic.Issue)
	for _, is := range issues {
		byKey[is.Field] = is
	}
	for _, u := range p.Unknown {
		require.Contains(t, byKey, u.Key)
		assert.Equal(t, u.Pos, byKey[u.Key].Pos)
		assert.Equal(t, u.Message(), byKey[u.Key].Message)
	}
	want := map[string]string{"outputSchema": "", "depend_on": "depends_on", "timout": "timeout"}
	for _, u := range p.Unknown {
		assert.Equal(t, want[u.Key], u.Suggestion, u.Key)
	}
}
