package llm

import (
	"errors"
	"fmt"
)

// ErrEmptyResponse reports an answer with no choices, or whose message has
// neither content nor tool calls. The [Response] returned with it still
// carries the usage and finish reason.
var ErrEmptyResponse = errors.New("llm: empty response")

// APIError is an error status answered by the server: a 4xx other than 429,
// or a 429 or 5xx that persisted through every retry. The error the
// client's transport made of it is in Err.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Message is the server's explanation.
	Message string
	// Type and Code are the error's type and code when the server gave them.
	Type string
	Code string
	// Err is the underlying error of the client's transport, if any.
	Err error
}

// Error describes e.
func (e *APIError) Error() string {
	s := fmt.Sprintf("llm: server answered %d %s", e.Status, statusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	switch e.Status {
	case 404:
		s += " (check the base URL: OpenAI-compatible servers usually serve under /v1, e.g. http://localhost:8080/v1; and check the model name)"
	case 401:
		s += " (check OPENAI_API_KEY)"
	}
	return s
}

// Unwrap returns the transport's error.
func (e *APIError) Unwrap() error { return e.Err }

// Retryable reports whether the status is a transient fault (429, 500, 502,
// 503, 504), one that persisted through the client's retries.
func (e *APIError) Retryable() bool {
	switch e.Status {
	case 429, 500, 502, 503, 504:
		return true
	}
	return false
}

// statusText is the reason phrase of an error status, as net/http names
// it, so that this package, which every agent links, needs no HTTP stack.
func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 402:
		return "Payment Required"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 406:
		return "Not Acceptable"
	case 407:
		return "Proxy Authentication Required"
	case 408:
		return "Request Timeout"
	case 409:
		return "Conflict"
	case 410:
		return "Gone"
	case 411:
		return "Length Required"
	case 412:
		return "Precondition Failed"
	case 413:
		return "Request Entity Too Large"
	case 414:
		return "Request URI Too Long"
	case 415:
		return "Unsupported Media Type"
	case 416:
		return "Requested Range Not Satisfiable"
	case 417:
		return "Expectation Failed"
	case 418:
		return "I'm a teapot"
	case 421:
		return "Misdirected Request"
	case 422:
		return "Unprocessable Entity"
	case 423:
		return "Locked"
	case 424:
		return "Failed Dependency"
	case 425:
		return "Too Early"
	case 426:
		return "Upgrade Required"
	case 428:
		return "Precondition Required"
	case 429:
		return "Too Many Requests"
	case 431:
		return "Request Header Fields Too Large"
	case 451:
		return "Unavailable For Legal Reasons"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	case 505:
		return "HTTP Version Not Supported"
	case 506:
		return "Variant Also Negotiates"
	case 507:
		return "Insufficient Storage"
	case 508:
		return "Loop Detected"
	case 510:
		return "Not Extended"
	case 511:
		return "Network Authentication Required"
	}
	return ""
}
