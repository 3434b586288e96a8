package llm

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStatusText holds statusText to net/http's names of the statuses an
// APIError can carry.
func TestStatusText(t *testing.T) {
	for code := 400; code < 600; code++ {
		assert.Equal(t, http.StatusText(code), statusText(code), "status %d", code)
	}
}

func TestAPIErrorRetryable(t *testing.T) {
	tests := []struct {
		status int
		want   bool
	}{
		{400, false}, {401, false}, {404, false}, {408, false},
		{429, true}, {500, true}, {501, false}, {502, true}, {503, true}, {504, true}, {505, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, (&APIError{Status: tt.status}).Retryable(), "status %d", tt.status)
	}
}
