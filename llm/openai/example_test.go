package openai_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
)

// New talks to any OpenAI-compatible server. With the environment
// unset it says what to set.
func ExampleNew() {
	cfg := openai.ConfigFromEnv() // OPENAI_API_KEY, OPENAI_BASE_URL, DAGENT_MODEL
	cfg.Timeout = time.Minute     // per attempt; transient faults are retried
	client, err := openai.New(cfg)
	if errors.Is(err, openai.ErrNotConfigured) {
		log.Fatal(err) // llm: no LLM configured: set OPENAI_API_KEY ... or OPENAI_BASE_URL ...
	}
	if err != nil {
		log.Fatal(err)
	}
	resp, err := client.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the capital of France?"}},
	})
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		log.Fatalf("the server refused (status %d): %s", apiErr.Status, apiErr.Message)
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Content, resp.Usage.Total())
}
