package plan_test

import (
	"io"
	"testing"

	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/require"
)

// FuzzParse checks that Parse never panics, that every error it returns is
// a list of problems, that whatever it accepts survives validation and
// rendering, and that the canonical form parses back to the same plan. The
// seed corpus is testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := plan.Parse(data)
		if err != nil {
			require.NotEmpty(t, plan.Problems(err), "a Parse error must hold problems: %v", err)
			require.ErrorIs(t, err, plan.ErrInvalid)
			return
		}
		d, err := p.DAG()
		require.Equal(t, plan.Problems(p.Validate()), plan.Problems(err), "Validate is the error of DAG")
		if d != nil {
			require.Equal(t, err, d.Err())
			require.Len(t, d.Order(), len(p.Tasks))
			for _, f := range plan.Formats {
				require.NoError(t, d.Render(io.Discard, f))
			}
		}

		out, err := p.Canonical()
		require.NoError(t, err)
		q, err := plan.Parse(out)
		require.NoError(t, err, "the canonical form must parse:\n%s", out)
		require.Equal(t, comparable(p), comparable(q), "canonical form:\n%s", out)
		again, err := q.Canonical()
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}

// comparable drops what the canonical form does not carry: source
// positions and the unknown keys Parse dropped.
func comparable(p *plan.Plan) *plan.Plan {
	c := *p
	c.Unknown = nil
	c.Tasks = make([]plan.Task, len(p.Tasks))
	for i, t := range p.Tasks {
		t.Pos = plan.Position{}
		c.Tasks[i] = t
	}
	return &c
}
