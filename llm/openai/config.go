package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/backoff"
)

// Defaults of [Config].
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxRetries     = 4
	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
	DefaultMaxRetryAfter  = 60 * time.Second
)

// Environment variables read by [ConfigFromEnv].
const (
	EnvAPIKey     = "OPENAI_API_KEY"
	EnvBaseURL    = "OPENAI_BASE_URL"
	EnvAPIVersion = "OPENAI_API_VERSION"
	EnvModel      = "DAGENT_MODEL"
)

// placeholderKey is sent when a base URL is configured without a key: local
// servers (llama.cpp, Ollama, vLLM) ignore it, and some reject a request
// without any Authorization header.
const placeholderKey = "no-key"

// ErrNotConfigured reports that no LLM server is configured.
var ErrNotConfigured = errors.New("llm: no LLM configured: set OPENAI_API_KEY (api.openai.com) or OPENAI_BASE_URL (any OpenAI-compatible server, e.g. http://localhost:8080/v1)")

// Config configures a [Client]. Only one of APIKey and BaseURL is
// required: an APIKey alone talks to api.openai.com, a BaseURL alone talks
// to a local server that needs no key. The zero Config names neither, and
// [New] refuses it with [ErrNotConfigured]; [ConfigFromEnv] reads one from
// the environment.
type Config struct {
	// APIKey is sent as a bearer token (as the api-key header for Azure).
	APIKey string
	// BaseURL is the server's API root including the version path, as in
	// the OpenAI SDKs: "http://localhost:8080/v1". Empty means
	// https://api.openai.com/v1.
	BaseURL string
	// Model is the default model, used when a Request names none.
	Model string
	// AzureAPIVersion, when set, selects Azure OpenAI's deployment API: the
	// key goes in the api-key header, the model names the deployment
	// (/openai/deployments/{model}/chat/completions) and api-version is
	// this value. Azure's OpenAI-compatible v1 endpoint
	// (https://NAME.openai.azure.com/openai/v1) needs no AzureAPIVersion.
	AzureAPIVersion string
	// Timeout bounds one attempt (sending the request and reading the whole
	// answer); zero means [DefaultTimeout]. The ctx given to Complete bounds
	// all attempts together.
	Timeout time.Duration
	// MaxRetries is how many times a transient fault (429, 500, 502, 503,
	// 504, a timed out attempt, a reset or refused connection) is retried;
	// zero means [DefaultMaxRetries], a negative value means no retries.
	MaxRetries int
	// Backoff paces the retries.
	Backoff Backoff
	// HTTPClient is the client whose transport carries the requests; nil
	// means a client with [http.DefaultTransport]. Its Transport is wrapped,
	// never modified; its Timeout, if any, bounds all attempts together.
	HTTPClient *http.Client
}

// Backoff paces retries as a [backoff.Policy] of Coefficient 2 and Jitter
// 0.5 does: the n-th retry waits Initial·2^(n-1), at most Max, with jitter
// (a random duration between half of it and all of it), unless the server
// said how long to wait with Retry-After, which is honoured up to
// MaxRetryAfter. Zero fields mean the defaults.
type Backoff struct {
	Initial       time.Duration
	Max           time.Duration
	MaxRetryAfter time.Duration
}

// policy is how long to wait between retries when the server does not
// say.
func (b Backoff) policy() backoff.Policy {
	return backoff.Policy{Initial: b.Initial, Coefficient: 2, Max: b.Max, Jitter: 0.5}
}

// ConfigFromEnv returns the configuration the environment describes:
// OPENAI_API_KEY, OPENAI_BASE_URL, DAGENT_MODEL and, for Azure OpenAI's
// deployment API, OPENAI_API_VERSION. Other fields are left zero (their
// defaults). Pass the result to [New], which reports [ErrNotConfigured]
// when neither a key nor a base URL is set.
func ConfigFromEnv() Config {
	return Config{
		APIKey:          strings.TrimSpace(os.Getenv(EnvAPIKey)),
		BaseURL:         strings.TrimSpace(os.Getenv(EnvBaseURL)),
		Model:           strings.TrimSpace(os.Getenv(EnvModel)),
		AzureAPIVersion: strings.TrimSpace(os.Getenv(EnvAPIVersion)),
	}
}

// String describes c without revealing the API key.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	base := c.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	s := fmt.Sprintf("openai.Config{BaseURL: %q, Model: %q, APIKey: %s", base, c.Model, key)
	if c.AzureAPIVersion != "" {
		s += fmt.Sprintf(", AzureAPIVersion: %q", c.AzureAPIVersion)
	}
	return s + "}"
}

// GoString is String, so that %#v does not reveal the API key either.
func (c Config) GoString() string { return c.String() }

// withDefaults validates c and fills in the defaults.
func (c Config) withDefaults() (Config, error) {
	if c.APIKey == "" && c.BaseURL == "" {
		return c, ErrNotConfigured
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("llm: base URL %q: want an http or https URL such as http://localhost:8080/v1", c.BaseURL)
		}
	}
	if c.AzureAPIVersion != "" && c.BaseURL == "" {
		return c, errors.New("llm: Azure OpenAI needs a base URL: set OPENAI_BASE_URL to https://NAME.openai.azure.com")
	}
	if c.Timeout < 0 || c.Backoff.Initial < 0 || c.Backoff.Max < 0 || c.Backoff.MaxRetryAfter < 0 {
		return c, errors.New("llm: negative timeout or backoff in Config")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.Backoff.Initial == 0 {
		c.Backoff.Initial = DefaultBackoffInitial
	}
	if c.Backoff.Max == 0 {
		c.Backoff.Max = DefaultBackoffMax
	}
	if c.Backoff.Max < c.Backoff.Initial {
		c.Backoff.Max = c.Backoff.Initial
	}
	if c.Backoff.MaxRetryAfter == 0 {
		c.Backoff.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return c, nil
}
