package telemetry

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/llm"
)

// Client returns c with each call made a span and measured, after the
// OpenTelemetry semantic conventions for generative AI: a client span
// "chat MODEL", a child of the span in the call's context (an attempt's,
// when an agent of a run observed by o makes the call), with
// gen_ai.operation.name "chat", gen_ai.provider.name provider (such as
// "openai", which an OpenAI-compatible server is too), the request's and
// the response's model, the finish reason, the tokens used and, on a
// failure, error.type; and the calls, their tokens
// (gen_ai.client.token.usage) and their durations
// (gen_ai.client.operation.duration) in o's metrics. A request that names
// no model is the client's default model's: c gives it when it has a
// Model method, as the openai package's client has. The prompts and the
// answers are not recorded.
func (o *Observer) Client(c llm.Client, provider string) llm.Client {
	tc := &client{next: c, o: o, provider: provider}
	if m, ok := c.(interface{ Model() string }); ok {
		tc.model = m.Model()
	}
	return tc
}

// client is a traced and measured llm.Client.
type client struct {
	next     llm.Client
	o        *Observer
	provider string
	model    string // the default model, when c has one
}

// Complete implements [llm.Client].
func (c *client) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	name := "chat"
	if model != "" {
		name += " " + model
	}
	ctx, span := c.o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(c.requestAttrs(req, model)...))
	start := time.Now()
	resp, err := c.next.Complete(ctx, req)
	elapsed := time.Since(start)
	errType := ""
	if err != nil {
		errType = errorType(err)
	}
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 5)
		if resp.Model != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(resp.Model))
		}
		if resp.FinishReason != "" {
			attrs = append(attrs, semconv.GenAIResponseFinishReasons(resp.FinishReason))
		}
		if resp.Usage != (llm.Usage{}) {
			attrs = append(attrs, semconv.GenAIUsageInputTokens(resp.Usage.PromptTokens), semconv.GenAIUsageOutputTokens(resp.Usage.CompletionTokens))
		}
		if err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, prose.Excerpt(err.Error(), maxStatusText))
		}
		span.SetAttributes(attrs...)
	}
	span.End()
	c.measure(ctx, model, resp, elapsed, errType)
	return resp, err
}

// requestAttrs are the attributes of a request, known before the call.
func (c *client) requestAttrs(req llm.Request, model string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(c.provider)}
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
	}
	if req.Schema != nil {
		attrs = append(attrs, semconv.GenAIOutputTypeJSON)
	}
	return attrs
}

// measure records a call in the metrics.
func (c *client) measure(ctx context.Context, model string, resp llm.Response, elapsed time.Duration, errType string) {
	m := c.o.m
	attrs := make([]attribute.KeyValue, 0, 3)
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	if resp.Model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(resp.Model))
	}
	op, provider := genaiconv.OperationNameChat, genaiconv.ProviderNameAttr(c.provider)
	if m.tokenUsage.Enabled(ctx) {
		if resp.Usage != (llm.Usage{}) {
			m.tokenUsage.Record(ctx, int64(resp.Usage.PromptTokens), op, provider, genaiconv.TokenTypeInput, attrs...)
			m.tokenUsage.Record(ctx, int64(resp.Usage.CompletionTokens), op, provider, genaiconv.TokenTypeOutput, attrs...)
		}
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	m.llmDuration.Record(ctx, elapsed.Seconds(), op, provider, attrs...)
	if m.calls.Enabled(ctx) {
		m.calls.Add(ctx, 1, metric.WithAttributes(append(attrs, semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(c.provider))...))
	}
}

// errorType is the error.type of a failed call: the HTTP status the
// server answered, timeout or canceled, empty_response or not_recorded
// for this module's own errors, else _OTHER — few values, as the
// conventions ask.
func errorType(err error) string {
	var api *llm.APIError
	switch {
	case errors.As(err, &api):
		return strconv.Itoa(api.Status)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, llm.ErrEmptyResponse):
		return "empty_response"
	case errors.Is(err, llm.ErrNotRecorded):
		return "not_recorded"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}
