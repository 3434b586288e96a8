package llm_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/llm"
)

func TestContextOverflow(t *testing.T) {
	tests := []struct {
		name string
		err  *llm.APIError
		want bool
	}{
		{"openai code", &llm.APIError{Status: 400, Code: "context_length_exceeded", Message: "too long"}, true},
		{"vllm message", &llm.APIError{Status: 400, Message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."}, true},
		{"llama.cpp type", &llm.APIError{Status: 400, Type: "exceed_context_size_error", Message: "the request exceeds the available context size, try increasing it"}, true},
		{"llama.cpp message", &llm.APIError{Status: 400, Message: "the request exceeds the available context size"}, true},
		{"payload too large", &llm.APIError{Status: 413, Message: "Prompt exceeds the context window"}, true},
		{"tokens against the context", &llm.APIError{Status: 400, Message: "prompt is 2384 tokens; context is 2048"}, true},
		{"another bad request", &llm.APIError{Status: 400, Message: "invalid model"}, false},
		{"a server error that mentions the context", &llm.APIError{Status: 500, Message: "context length"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped := fmt.Errorf("metaplanner: plan: attempt 1: %w", tt.err)
			assert.Equal(t, tt.want, errors.Is(wrapped, llm.ErrContextOverflow))
		})
	}
}
