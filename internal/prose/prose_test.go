package prose_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/internal/prose"
)

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 tasks", 1: "1 task", 2: "2 tasks"} {
		assert.Equal(t, want, prose.Plural(n, "task"))
	}
}

func TestOneLine(t *testing.T) {
	tests := map[string]string{
		"plain":             "plain",
		"a\nb":              "a b",
		"a\r\nb\rc":         "a b c",
		"\n::error::forged": " ::error::forged",
	}
	for in, want := range tests {
		assert.Equal(t, want, prose.OneLine(in), "%q", in)
	}
}
