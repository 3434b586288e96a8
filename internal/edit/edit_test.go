package edit_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/internal/edit"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"command", "command", 0},
		{"comand", "command", 1},
		{"timout", "timeout", 1},
		{"cuont", "count", 1},
		{"", "command", 7},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{strings.Repeat("a", 41), "a", 99},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, edit.Distance(tt.a, tt.b), "%q %q", tt.a, tt.b)
		assert.Equal(t, tt.want, edit.Distance(tt.b, tt.a), "%q %q", tt.b, tt.a)
	}
}
