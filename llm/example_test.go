package llm_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/dagent-dev/dagent/llm"
)

// A Meter counts tokens and calls, and refuses calls once a budget is spent.
func ExampleMeter() {
	model := llm.ClientFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"},
			Usage:   llm.Usage{PromptTokens: 30, CompletionTokens: 10},
		}, nil
	})
	meter := llm.NewMeter(model, llm.Budget{MaxCalls: 2})
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for range 3 {
		if _, err := meter.Complete(context.Background(), req); err != nil {
			fmt.Println(errors.Is(err, llm.ErrBudgetExceeded), err)
		}
	}
	fmt.Println(meter.Calls(), meter.Usage().PromptTokens, meter.Usage().CompletionTokens)
	// Output:
	// true llm: budget exceeded: 2 calls made of a budget of 2
	// 2 60 20
}

// A Meter charged with what other processes spent of a shared budget goes
// on from there.
func ExampleMeter_Charge() {
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"}}, nil
	})
	meter := llm.NewMeter(model, llm.Budget{MaxCalls: 3})
	meter.Charge(llm.Usage{PromptTokens: 120}, 2)
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for range 2 {
		if _, err := meter.Complete(context.Background(), req); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(meter.Calls(), meter.Usage().PromptTokens)
	// Output:
	// llm: budget exceeded: 3 calls made of a budget of 3
	// 3 120
}

// Replay answers from a recording made with Record, without a model.
func ExampleReplay() {
	client, err := llm.Replay("testdata/capital.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	resp, err := client.Complete(context.Background(), llm.Request{
		Model:    "gpt-4o-mini",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the capital of France? One word."}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Content, resp.Usage.Total())

	_, err = client.Complete(context.Background(), llm.Request{
		Model:    "gpt-4o-mini",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "And of Italy?"}},
	})
	fmt.Println(errors.Is(err, llm.ErrNotRecorded))
	// Output:
	// Paris. 16
	// true
}

// A server that refuses a prompt too large for the model's context answers
// with an error that matches ErrContextOverflow, however it words it.
func ExampleErrContextOverflow() {
	err := fmt.Errorf("plan: %w", &llm.APIError{
		Status:  400,
		Message: "This model's maximum context length is 4096 tokens. However, you requested 6120 tokens.",
	})
	if errors.Is(err, llm.ErrContextOverflow) {
		fmt.Println("shorten the prompt")
	}
	// Output:
	// shorten the prompt
}
