package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
)

// A Client talks to any server of the OpenAI chat completions API: here a
// local stand-in, reached by its base URL alone, as a local model server
// would be.
func ExampleClient_Complete() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "c1", "object": "chat.completion", "model": "local-model",
			"choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris."}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 14, "completion_tokens": 2}}`)
	}))
	defer srv.Close()

	client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "local-model"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := client.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the capital of France?"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Content, resp.Model, resp.FinishReason, resp.Usage.Total())
	// Output:
	// POST /v1/chat/completions
	// Paris. local-model stop 16
}
