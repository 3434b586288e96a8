package verify_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/dagent-dev/dagent/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetCompilesEachSourceOnce(t *testing.T) {
	s := verify.NewSet()
	a, err := s.Compile(`(= data/result "ok")`)
	require.NoError(t, err)
	b, err := s.Compile(`(= data/result "ok")`)
	require.NoError(t, err)
	assert.Same(t, a, b, "the second Compile must return the first compilation")
	c, err := s.Compile(`(= data/result "no")`)
	require.NoError(t, err)
	assert.NotSame(t, a, c)
	assert.Equal(t, 2, s.Len())
}

func TestSetAgreesWithCheckAndCompile(t *testing.T) {
	for _, src := range []string{
		`(= data/result "ok")`,
		`false`,
		`(count data/result)`,
		`(cuont data/result)`,
		`(= 1`,
		``,
	} {
		t.Run(src, func(t *testing.T) {
			s := verify.NewSet()
			assert.Equal(t, verify.Check(src), s.Check(src))
			want, wantErr := verify.Compile(src)
			got, err := s.Compile(src)
			if wantErr != nil {
				require.Error(t, err)
				assert.Equal(t, wantErr.Error(), err.Error())
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, want.Source(), got.Source())
			assert.Equal(t, 1, s.Len(), "Check and Compile share one compilation")
		})
	}
}

func TestSetOptionsApply(t *testing.T) {
	s := verify.NewSet(verify.WithMaxNodes(10))
	_, err := s.Compile(`(count [1 2 3 4 5 6 7 8 9 10])`)
	require.ErrorContains(t, err, "predicate too large", "the set's options must apply to what it compiles")
}

func TestZeroSetCaches(t *testing.T) {
	var s verify.Set
	a, err := s.Compile(`true`)
	require.NoError(t, err)
	b, err := s.Compile(`true`)
	require.NoError(t, err)
	assert.Same(t, a, b, "the zero Set must cache as a new one does")
	assert.Equal(t, 1, s.Len())
}

func TestNilSetCompilesEveryTime(t *testing.T) {
	var s *verify.Set
	a, err := s.Compile(`true`)
	require.NoError(t, err)
	b, err := s.Compile(`true`)
	require.NoError(t, err)
	assert.NotSame(t, a, b)
	assert.Zero(t, s.Len())
	assert.Equal(t, verify.Check(`false`), s.Check(`false`))
}

func TestSetConcurrentUse(t *testing.T) {
	s := verify.NewSet()
	srcs := make([]string, 20)
	for i := range srcs {
		srcs[i] = fmt.Sprintf(`(= data/result %d)`, i%5)
	}
	got := make([]*verify.Predicate, len(srcs))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Go(func() {
			p, err := s.Compile(src)
			assert.NoError(t, err)
			got[i] = p
		})
	}
	s.CompileAll(srcs)
	wg.Wait()
	assert.Equal(t, 5, s.Len())
	for i := range srcs {
		assert.Same(t, got[i%5], got[i])
	}
}

func ExampleSet() {
	s := verify.NewSet()
	// A linter checks every distinct predicate of a plan once ...
	s.CompileAll([]string{`(> (count data/result) 0)`, `(> (count data/result) 0)`, `(cuont data/result)`})
	for _, d := range s.Check(`(cuont data/result)`) {
		fmt.Println(d)
	}
	// ... and a runner evaluates the same compilation.
	p, _ := s.Compile(`(> (count data/result) 0)`)
	v, _ := p.Eval(context.Background(), verify.Bindings{Result: []any{"a"}})
	fmt.Println(v.Passed, s.Len())
	// Output:
	// 1:2: error: unknown function cuont (did you mean count)
	// true 2
}
