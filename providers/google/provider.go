// Package google is a ChatProvider for Google's Gemini API (the Gemini
// Developer API backend), built on google.golang.org/genai.
//
// The provider streams every response (streamGenerateContent?alt=sse) and
// does not retry: the SDK's HTTP retries and its automatic stream
// continuation are off, and the agent loop retries whole steps (see
// providers.Retry). Errors are *providers.Error, or the context's error
// when the context given to Stream ended.
//
// # Mapping
//
//   - Request.System goes as the system instruction; a system message in
//     the history goes as user text wrapped in <system>…</system>.
//   - Assistant messages become "model" contents: the thought part (only
//     when it carries a Gemini thought signature), the text and one
//     functionCall part per call (args: the arguments JSON object).
//   - Tool messages become functionResponse parts: {"output": TEXT}, or
//     {"error": TEXT} for an error result (providers.Message.IsError, or a
//     text starting with "<system>ERROR:"). Consecutive tool messages, and a
//     user message right after them, make one "user" content.
//   - Tool schemas are adapted by Schema to Gemini's OpenAPI subset.
//   - A tool result's text parts are joined with newlines; its images go
//     inside the function response, as its parts.
//
// # Stop reasons
//
// The finish reason is emitted last (providers.EventStop): STOP is StopEnd,
// or StopToolUse when the response called functions; MAX_TOKENS is
// StopMaxTokens; SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII
// and IMAGE_SAFETY are StopContentFilter; anything else StopOther. Gemini
// sends each function call whole (its args a parsed object), so no call is
// ever emitted with cut-off arguments; a call of the history marked
// Truncated goes back with {} as its args.
//
// # Call ids
//
// Gemini's function calls usually have no id. A call without one gets
// NAME:IDX (IDX its position among the response's calls), which is stable
// and says the function's name. A function response needs the function's
// name: it is found from the tool message's ToolCallID through the
// history's assistant messages (or, for a NAME:IDX id, from the id itself).
// Generated ids are not sent to Gemini; ids Gemini gave are sent back.
//
// # Thought signatures
//
// Gemini 3 signs its thoughts: a thoughtSignature may come on a thought
// part, a text part (possibly empty) or a functionCall part, and must be
// sent back on the same part. The stream's ReasoningSignature method
// returns them, once Next returned io.EOF, as {"gemini": {...}} for the
// caller to keep as providers.Message.ReasoningSignature. When a gemini-3
// model's history has function calls without any signature (a history from
// another provider), the first call of the message carries Gemini's
// documented placeholder "skip_thought_signature_validator".
package google

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// The defaults and the environment variables of the google provider.
const (
	Name           = "google"
	DefaultBaseURL = "https://generativelanguage.googleapis.com"
	DefaultModel   = "gemini-3-pro-preview"
	// DefaultThinkingLevel is used with gemini-3 models when no level is
	// configured.
	DefaultThinkingLevel = "high"

	BaseURLEnv = providers.GoogleBaseURLEnv
	APIKeyEnv  = providers.GoogleAPIKeyEnv
	// AltAPIKeyEnv is read when APIKeyEnv is not set.
	AltAPIKeyEnv = providers.GeminiAPIKeyEnv
	ModelEnv     = providers.GoogleModelEnv
)

// Config configures a Provider.
type Config struct {
	// Name is the provider's name (default "google").
	Name string
	// BaseURL is the API base, without the version (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as x-goog-api-key.
	APIKey string
	// APIKeyEnv names where the key came from, for error messages.
	APIKeyEnv string
	// Model is the model name (default DefaultModel).
	Model string
	// MaxTokens, when > 0, caps each response (maxOutputTokens).
	MaxTokens int32
	// ThinkingLevel is minimal, low, medium or high; "off" sends no
	// thinking configuration. Empty means DefaultThinkingLevel for gemini-3
	// models and nothing for others. Thoughts are included in the response
	// whenever a level is sent.
	ThinkingLevel string
	// Headers are added to every request.
	Headers map[string]string
	// HTTPClient is the client requests go through (default: a plain
	// one); Timeouts are enforced on top of it.
	HTTPClient *http.Client
	// Timeouts bound the waits on the API (zero values: the defaults of
	// providers/timeouts).
	Timeouts timeouts.Timeouts
	// NoImageInput says the model takes no images: each image in the
	// history is sent as providers.ImagePlaceholder text instead.
	NoImageInput bool
}

// Provider is the Gemini ChatProvider.
type Provider struct {
	cfg    Config
	client *genai.Client
	level  genai.ThinkingLevel
}

var _ providers.ChatProvider = (*Provider)(nil)

// New checks cfg, fills the defaults and returns the provider. The key is
// not checked here (the registry does).
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = Name
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = APIKeyEnv
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %s: base URL %q is not an http(s) URL", cfg.Name, cfg.BaseURL)
	}
	p := &Provider{cfg: cfg}
	switch level := strings.ToLower(strings.TrimSpace(cfg.ThinkingLevel)); level {
	case "":
		if isGemini3(cfg.Model) {
			p.level = genai.ThinkingLevelHigh
		}
	case "off", "none":
	case "minimal", "low", "medium", "high":
		p.level = genai.ThinkingLevel(strings.ToUpper(level))
	default:
		return nil, fmt.Errorf("provider %s: thinking level %q: want minimal, low, medium, high or off", cfg.Name, cfg.ThinkingLevel)
	}
	httpClient := timeouts.Client(cfg.HTTPClient, cfg.Timeouts)
	headers := http.Header{}
	for k, v := range cfg.Headers {
		headers.Set(k, v)
	}
	attempts := int32(1)
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: httpClient,
		HTTPOptions: genai.HTTPOptions{
			BaseURL: strings.TrimRight(cfg.BaseURL, "/") + "/",
			Headers: headers,
			// The agent loop retries whole steps.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: &attempts},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", cfg.Name, err)
	}
	p.client = client
	return p, nil
}

func isGemini3(model string) bool {
	return strings.HasPrefix(strings.TrimPrefix(model, "models/"), "gemini-3")
}

// Name implements providers.ChatProvider.
func (p *Provider) Name() string { return p.cfg.Name }

// Model implements providers.ChatProvider.
func (p *Provider) Model() string { return p.cfg.Model }

// BaseURL is the API base URL requests go to.
func (p *Provider) BaseURL() string { return p.cfg.BaseURL }

// APIKeyEnv is what authentication errors name.
func (p *Provider) APIKeyEnv() string { return p.cfg.APIKeyEnv }

// ThinkingLevel is the thinking level sent (empty: none).
func (p *Provider) ThinkingLevel() string { return strings.ToLower(string(p.level)) }

// Stream implements providers.ChatProvider. It waits for the first chunk,
// so that a refused request fails here.
func (p *Provider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	if p.cfg.NoImageInput {
		req.History = providers.WithoutImages(req.History)
	}
	contents, config, err := p.request(req)
	if err != nil {
		return nil, p.newError(providers.ErrBadRequest, 0, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	next, stop := iter.Pull2(p.client.Models.GenerateContentStream(sctx, p.cfg.Model, contents, config))
	s := &stream{ctx: ctx, cancel: cancel, p: p, next: next, stop: stop, sigs: signatures{}}
	first, err, ok := p.recovered(next)
	if err != nil {
		s.Close()
		return nil, p.classify(ctx, err)
	}
	s.pending, s.pendingOK = first, ok
	return s, nil
}

func (p *Provider) newError(kind providers.ErrorKind, status int, err error) *providers.Error {
	return providers.NewError(p.cfg.Name, kind, status, p.cfg.APIKeyEnv, err)
}

func (p *Provider) ctxError(ctx context.Context) error {
	return providers.ContextError(ctx, p.cfg.Name)
}
