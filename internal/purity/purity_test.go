package purity_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/internal/purity"
)

// recorder is a testing.TB that keeps what Check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(strings.SplitN(fmt.Sprintf(format, args...), ": ", 2)[1]))
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, src string
		banned    []string
		want      []string
	}{
		{"pure", "package p\nimport (\"sync/atomic\"; \"time\")\nvar b atomic.Bool\nfunc f(d time.Duration) time.Duration { return d * 2 }\n", nil, nil},
		{"goroutine", "package p\nfunc f() { go f() }\n", nil, []string{"go statement"}},
		{"channels", "package p\nfunc f(c chan int) { c <- 1; <-c; select {} }\n", nil, []string{"channel type", "channel send", "channel receive", "select"}},
		{"lock and randomness", "package p\nimport (_ \"sync\"; _ \"math/rand/v2\")\n", nil, []string{"imports sync", "imports math/rand/v2"}},
		{"clock under another name", "package p\nimport t \"time\"\nvar x = t.Now()\n", nil, []string{"time.Now reads or waits on the clock"}},
		{"banned by the caller", "package p\nimport _ \"context\"\n", []string{"context"}, []string{"imports context"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.go")
			assert.NoError(t, os.WriteFile(path, []byte(tt.src), 0o644))
			r := &recorder{TB: t}
			purity.Check(r, []string{path}, tt.banned...)
			assert.Equal(t, tt.want, r.errs)
		})
	}
}
