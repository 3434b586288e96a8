package llm

import (
	"errors"
	"strings"
)

// ErrContextOverflow is matched by an *[APIError] whose server refused
// the request because the prompt does not fit in the model's context, so
// that a caller can offer a shorter prompt or name a way to get one.
var ErrContextOverflow = errors.New("llm: the prompt is larger than the model's context")

// overflowPhrases are how servers word a context overflow, lower-case:
// OpenAI and vLLM ("maximum context length"), llama.cpp ("exceeds the
// available context size"), and others ("context window"); a message
// that speaks of both the context and tokens counts too.
var overflowPhrases = []string{"context length", "context size", "context window", "context_length"}

// Is reports whether target is [ErrContextOverflow] and the server said
// the request overflowed the model's context: by the code OpenAI gives
// ("context_length_exceeded"), the type llama.cpp gives
// ("exceed_context_size_error"), or the message.
func (e *APIError) Is(target error) bool {
	if target != ErrContextOverflow || (e.Status != 400 && e.Status != 413) {
		return false
	}
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, p := range overflowPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	// Smaller servers count tokens against "the context" in their own
	// words: "prompt is 2384 tokens; context is 2048".
	return strings.Contains(msg, "context") && strings.Contains(msg, "token")
}
