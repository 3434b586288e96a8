package llm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// ErrNotRecorded reports a request a [Replayer] has no recording of.
var ErrNotRecorded = errors.New("llm: request not recorded")

// RequestKey is the key under which an exchange is recorded: the hex
// SHA-256 of the canonical JSON of req. The canonical JSON is req marshalled
// as a [Request] (so it holds model — as the request names it, empty when the
// client's default applies —, messages with role, content, tool_calls and
// tool_call_id, tools with name, description and parameters, schema with
// name, schema and strict, temperature and max_tokens, each only when set),
// with every object's keys sorted (those inside tool parameters and schemas
// too), no insignificant whitespace, no HTML escaping, and numbers written
// as they were given.
func RequestKey(req Request) (string, error) {
	b, err := canonicalJSON(req)
	if err != nil {
		return "", fmt.Errorf("llm: request key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// canonicalJSON marshals v with sorted keys and no insignificant
// whitespace.
func canonicalJSON(v any) ([]byte, error) {
	x, err := jsonv.Normalize(v)
	if err != nil {
		return nil, err
	}
	return jsonv.Marshal(x)
}

// exchange is one line of a recording.
type exchange struct {
	Key      string         `json:"key"`
	Request  *Request       `json:"request"`
	Response *Response      `json:"response,omitempty"`
	Error    *recordedError `json:"error,omitempty"`
}

// recordedError is a recorded failure.
type recordedError struct {
	Kind    string `json:"kind"` // "api" or "empty_response"
	Message string `json:"message"`
	Status  int    `json:"status,omitempty"`
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
}

// Kinds of recorded errors.
const (
	kindAPI   = "api"
	kindEmpty = "empty_response"
)

// recordError returns how err is recorded, or false when it is not.
func recordError(err error) (*recordedError, bool) {
	if err == nil {
		return nil, true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBudgetExceeded) {
		return nil, false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Retryable() {
			return nil, false
		}
		return &recordedError{Kind: kindAPI, Message: ae.Message, Status: ae.Status, Type: ae.Type, Code: ae.Code}, true
	}
	if errors.Is(err, ErrEmptyResponse) {
		return &recordedError{Kind: kindEmpty, Message: err.Error()}, true
	}
	return nil, false
}

// err rebuilds the recorded error.
func (e *recordedError) err() error {
	if e.Kind == kindAPI {
		return &APIError{Status: e.Status, Message: e.Message, Type: e.Type, Code: e.Code}
	}
	return &replayedError{msg: e.Message, sentinel: ErrEmptyResponse}
}

// replayedError is a recorded error message that still matches its
// sentinel.
type replayedError struct {
	msg      string
	sentinel error
}

func (e *replayedError) Error() string { return e.msg }
func (e *replayedError) Unwrap() error { return e.sentinel }

// Recorder is a [Client] that forwards to another and appends every exchange
// to a recording (see [Record] for the format). Each exchange is written
// with one write as soon as it completes. It is safe for concurrent use.
// There is no useful zero Recorder: create it with [Record].
type Recorder struct {
	client Client
	path   string

	mu     sync.Mutex
	f      *os.File
	closed bool
}

var _ Client = (*Recorder)(nil)

// Record returns a [Recorder] that forwards to c and appends to the file at
// path, creating it if need be. Close it when done.
//
// The recording is a JSON Lines file, one exchange a line:
//
//	{"key":"<RequestKey>","request":{...},"response":{...}}
//	{"key":"<RequestKey>","request":{...},"response":{...},"error":{"kind":"empty_response","message":"..."}}
//
// request and response are the [Request] and [Response] as JSON. error is
// present for the failures that are the server's answer to the request
// rather than an accident of the moment: an *[APIError] with a status that is
// not retried (kind "api", with status, message, type and code) and
// [ErrEmptyResponse] (kind "empty_response"). Transient faults, cancellations,
// budget refusals and local errors are not recorded: they say nothing about
// the model.
func Record(c Client, path string) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("llm: record: %w", err)
	}
	return &Recorder{client: c, path: path, f: f}, nil
}

// Complete forwards req and records the exchange. If the exchange cannot be
// written, the answer is returned with the write error.
func (r *Recorder) Complete(ctx context.Context, req Request) (Response, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		if _, err := RequestKey(req); err != nil {
			return Response{}, err
		}
		return Response{}, fmt.Errorf("llm: record %s: %w", r.path, os.ErrClosed)
	}
	return recordExchange(ctx, r.client, req, func(_ context.Context, _ string, line []byte) error {
		line = append(line, '\n')
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.closed {
			return fmt.Errorf("llm: record %s: %w", r.path, os.ErrClosed)
		}
		if _, err := r.f.Write(line); err != nil {
			return fmt.Errorf("llm: record %s: %w", r.path, err)
		}
		return nil
	})
}

// RecordFunc returns a [Client] that forwards to c and hands every exchange
// a [Recorder] would record to sink before it answers: its key and the line a
// Recorder would write, without the newline (see [Record] for the format).
// If sink fails, the answer is returned with sink's error. The client is as
// safe for concurrent use as c and sink are.
func RecordFunc(c Client, sink func(ctx context.Context, key string, line []byte) error) Client {
	return ClientFunc(func(ctx context.Context, req Request) (Response, error) {
		return recordExchange(ctx, c, req, sink)
	})
}

// recordExchange forwards req to c and hands the exchange to sink when it
// is one to record.
func recordExchange(ctx context.Context, c Client, req Request, sink func(ctx context.Context, key string, line []byte) error) (Response, error) {
	key, err := RequestKey(req)
	if err != nil {
		return Response{}, err
	}
	resp, err := c.Complete(ctx, req)
	rec, ok := recordError(err)
	if !ok || (err != nil && ctx.Err() != nil) {
		return resp, err
	}
	ex := exchange{Key: key, Request: &req, Error: rec}
	if err == nil || resp.Usage != (Usage{}) || resp.FinishReason != "" || resp.Message.Content != "" {
		ex.Response = &resp
	}
	line, merr := jsonv.Marshal(ex)
	if merr != nil {
		return resp, errors.Join(err, fmt.Errorf("llm: record: %w", merr))
	}
	if serr := sink(ctx, key, line); serr != nil {
		return resp, errors.Join(err, serr)
	}
	return resp, err
}

// Close closes the recording. Calls after Close fail.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("llm: record %s: %w", r.path, err)
	}
	return nil
}

// Replayer is a [Client] that answers from a recording made by a [Recorder] and
// fails with [ErrNotRecorded] on any request it has no answer for. A request
// recorded several times is answered with its recordings in order, and then
// with the last one again. It is safe for concurrent use. The zero Replayer
// has no recording: it fails every request with ErrNotRecorded; create one
// with [Replay] or [ReplayLines].
type Replayer struct {
	path string

	mu      sync.Mutex
	answers map[string][]exchange
	next    map[string]int
}

var _ Client = (*Replayer)(nil)

// Replay reads the recording at path. The key of each line is recomputed
// from its request (so a request may be edited by hand); a line that is not
// a valid exchange is an error naming the line.
func Replay(path string) (*Replayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("llm: replay: %w", err)
	}
	defer f.Close()
	r := &Replayer{path: path, answers: map[string][]exchange{}, next: map[string]int{}}
	br := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("llm: replay %s:%d: %w", path, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := r.add(line); perr != nil {
				return nil, fmt.Errorf("llm: replay %s:%d: %w", path, n, perr)
			}
		}
		if err != nil {
			return r, nil
		}
	}
}

// ReplayLines is [Replay] over a recording held in memory, one exchange per
// line (blank lines are skipped). name stands for the recording in errors,
// as the path does for Replay: a bad line is an error naming name and the
// line's number, from 1.
func ReplayLines(name string, lines [][]byte) (*Replayer, error) {
	r := &Replayer{path: name, answers: map[string][]exchange{}, next: map[string]int{}}
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := r.add(line); err != nil {
			return nil, fmt.Errorf("llm: replay %s:%d: %w", name, i+1, err)
		}
	}
	return r, nil
}

// RecordedUsage is what the exchanges of a recording spent, one exchange
// per line as [Record] writes them (blank lines are skipped): the calls,
// failed ones included, and the tokens their answers report. A [Meter]
// charged with it ([Meter.Charge]) goes on with a budget from where the
// recorded calls left it. name stands for the recording in errors, as in
// [ReplayLines].
func RecordedUsage(name string, lines [][]byte) (u Usage, calls int, err error) {
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ex, err := parseExchange(line)
		if err != nil {
			return Usage{}, 0, fmt.Errorf("llm: recording %s:%d: %w", name, i+1, err)
		}
		calls++
		if ex.Response != nil {
			u.PromptTokens += ex.Response.Usage.PromptTokens
			u.CompletionTokens += ex.Response.Usage.CompletionTokens
		}
	}
	return u, calls, nil
}

// add parses one line of a recording.
func (r *Replayer) add(line []byte) error {
	ex, err := parseExchange(line)
	if err != nil {
		return err
	}
	key, err := RequestKey(*ex.Request)
	if err != nil {
		return err
	}
	r.answers[key] = append(r.answers[key], ex)
	return nil
}

// parseExchange reads one line of a recording.
func parseExchange(line []byte) (exchange, error) {
	var ex exchange
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ex); err != nil {
		return ex, fmt.Errorf("not a recorded exchange: %w", err)
	}
	if ex.Request == nil {
		return ex, errors.New("the exchange has no request")
	}
	if ex.Response == nil && ex.Error == nil {
		return ex, errors.New("the exchange has neither a response nor an error")
	}
	if ex.Error != nil && ex.Error.Kind != kindAPI && ex.Error.Kind != kindEmpty {
		return ex, fmt.Errorf("unknown error kind %q (want %q or %q)", ex.Error.Kind, kindAPI, kindEmpty)
	}
	return ex, nil
}

// Complete answers req from the recording.
func (r *Replayer) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	key, err := RequestKey(req)
	if err != nil {
		return Response{}, err
	}
	r.mu.Lock()
	answers := r.answers[key]
	i := r.next[key]
	if i < len(answers)-1 {
		r.next[key] = i + 1
	}
	r.mu.Unlock()
	if len(answers) == 0 {
		model := req.Model
		if model == "" {
			model = "(client default)"
		}
		return Response{}, fmt.Errorf("%w in %s: key %s, model %s, last user message %q",
			ErrNotRecorded, r.path, key, model, truncate(lastUserMessage(req), 200))
	}
	ex := answers[i]
	var resp Response
	if ex.Response != nil {
		resp = *ex.Response
	}
	if ex.Error != nil {
		return resp, ex.Error.err()
	}
	return resp, nil
}

// lastUserMessage is the content of req's last user message.
func lastUserMessage(req Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == RoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
