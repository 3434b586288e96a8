package llm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dagent-dev/dagent/llm"
)

// paris is a model that knows one answer.
var paris = llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: "Paris."},
		Usage:   llm.Usage{PromptTokens: 14, CompletionTokens: 2},
	}, nil
})

var capital = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the capital of France?"}}}

// Record keeps every exchange with the model in a file that Replay answers
// from later, without the model: for tests, demos and debugging.
func ExampleRecord() {
	dir, err := os.MkdirTemp("", "dagent-llm")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl")

	rec, err := llm.Record(paris, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := rec.Complete(context.Background(), capital); err != nil {
		fmt.Println(err)
		return
	}
	if err := rec.Close(); err != nil {
		fmt.Println(err)
		return
	}

	replay, err := llm.Replay(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := replay.Complete(context.Background(), capital)
	fmt.Println(resp.Message.Content, resp.Usage.Total(), err)
	// Output: Paris. 16 <nil>
}

// RecordFunc hands each exchange to a function of the host — a database, a
// log — and ReplayLines answers from lines kept in memory.
func ExampleRecordFunc() {
	var lines [][]byte
	client := llm.RecordFunc(paris, func(ctx context.Context, key string, line []byte) error {
		lines = append(lines, line)
		return nil
	})
	if _, err := client.Complete(context.Background(), capital); err != nil {
		fmt.Println(err)
		return
	}

	replay, err := llm.ReplayLines("memory", lines)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := replay.Complete(context.Background(), capital)
	fmt.Println(len(lines), resp.Message.Content, err)
	// Output: 1 Paris. <nil>
}

// RecordedUsage counts what a recording spent, so that a budget goes on in
// another process from where the recorded calls left it.
func ExampleRecordedUsage() {
	var lines [][]byte
	client := llm.RecordFunc(paris, func(ctx context.Context, key string, line []byte) error {
		lines = append(lines, line)
		return nil
	})
	for range 2 {
		if _, err := client.Complete(context.Background(), capital); err != nil {
			fmt.Println(err)
			return
		}
	}
	spent, calls, err := llm.RecordedUsage("memory", lines)
	if err != nil {
		fmt.Println(err)
		return
	}
	meter := llm.NewMeter(paris, llm.Budget{MaxCalls: 3})
	meter.Charge(spent, calls)
	fmt.Println(calls, spent.Total(), meter.Calls())
	// Output: 2 32 2
}
