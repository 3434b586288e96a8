package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dagent-dev/dagent/backoff"
	"github.com/dagent-dev/dagent/llm"
)

// ErrTimeout reports that an attempt got no complete answer within
// [Config.Timeout] (after every retry also timed out). Such an error also
// matches [context.DeadlineExceeded].
var ErrTimeout = errors.New("llm: timeout")

// retryTransport is an http.RoundTripper that gives every attempt its own
// timeout and retries transient faults with backoff. It sits under
// go-openai's client, so go-openai still builds its typed errors from the
// final response.
type retryTransport struct {
	base          http.RoundTripper
	timeout       time.Duration
	maxRetries    int
	delay         backoff.Policy // when the server does not say
	maxRetryAfter time.Duration
}

// RoundTrip sends req, retrying transient faults. The request body is
// buffered so it can be sent again; the response body is read whole within
// the attempt's timeout.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("llm: read request body: %w", err)
		}
		body = b
	}
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		resp, err := t.attempt(ctx, req, body)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !retryable(resp, err) {
			return resp, err
		}
		if attempt > t.maxRetries {
			if err != nil && t.maxRetries > 0 {
				return nil, fmt.Errorf("llm: giving up after %d attempts: %w", attempt, err)
			}
			return resp, nil
		}
		wait := t.wait(attempt, resp)
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			// The caller's deadline would pass while we wait: what went
			// wrong says more than a deadline error would.
			return resp, err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("%w (while waiting to retry after %s)", ctx.Err(), describe(resp, err))
		case <-timer.C:
		}
	}
}

// attempt sends one copy of req under its own timeout and reads the whole
// answer.
func (t *retryTransport) attempt(ctx context.Context, req *http.Request, body []byte) (*http.Response, error) {
	actx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	r := req.Clone(actx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		var data []byte
		data, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			resp.Body = io.NopCloser(bytes.NewReader(data))
			resp.Request = req
			return resp, nil
		}
		err = fmt.Errorf("llm: read response: %w", err)
	}
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: no complete answer within %s: %w", ErrTimeout, t.timeout, context.DeadlineExceeded)
	}
	return nil, err
}

// wait is how long to wait before retry number n: what the server asked
// for, up to maxRetryAfter, or else the delay policy's wait.
func (t *retryTransport) wait(n int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp.Header, time.Now()); ok {
			return min(d, t.maxRetryAfter)
		}
	}
	return t.delay.Delay(n)
}

// retryAfter reads how long the server asked to wait: retry-after-ms
// (OpenAI) or Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// retryableStatus reports whether a response status is a transient fault,
// as [llm.APIError.Retryable] says.
func retryableStatus(status int) bool { return (&llm.APIError{Status: status}).Retryable() }

// retryable reports whether the outcome of an attempt is a transient fault.
func retryable(resp *http.Response, err error) bool {
	if err == nil {
		return retryableStatus(resp.StatusCode)
	}
	return transient(err)
}

// transient reports whether a transport error is worth another attempt.
func transient(err error) bool {
	switch {
	case errors.Is(err, ErrTimeout),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection reset") || strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "server closed") || strings.Contains(msg, "GOAWAY")
}

// describe names the outcome of an attempt for an error message.
func describe(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}
