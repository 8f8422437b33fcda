// Package anthropic is a ChatProvider for Anthropic's Messages API, built on
// the official SDK (github.com/anthropics/anthropic-sdk-go/v2).
//
// The provider streams every response and does not retry: the SDK's own
// retries are off and the agent loop retries whole steps (see
// providers.Retry). Errors are *providers.Error, or the context's error when
// the context given to Stream ended.
//
// # Mapping
//
//   - Request.System goes as the system prompt; a system message in the
//     history goes as user text wrapped in <system>…</system>.
//   - An assistant message becomes its thinking block(s) (when it carries an
//     Anthropic signature, see providers.Message.ReasoningSignature), its
//     text and one tool_use block per call (input: the arguments JSON; {}
//     when they are not a JSON object).
//   - Tool messages become tool_result blocks (is_error from
//     Message.IsError, or for older histories a text starting with
//     "<system>ERROR:"); consecutive tool messages, and any user message
//     right after them, are merged into one user message, as the API wants
//     strictly alternating roles.
//   - Tool schemas are adapted by InputSchema.
//   - The system prompt, the last tool and the last block of the last
//     message are marked for prompt caching (cache_control ephemeral).
//   - With thinking on (Config.ThinkingBudget), a request that continues a
//     tool-using assistant message without thinking blocks (reasoning from
//     another provider, or a signature not kept) is sent without thinking:
//     the API would refuse it otherwise.
//
// # Streaming
//
// text_delta and thinking_delta deltas are emitted as they arrive. A
// tool_use block's input arrives in input_json_delta pieces; the call is
// emitted (providers.EventToolCall) the moment its content_block_stop
// arrives, when its input parses; an input that does not parse is held
// until the stop reason comes: after stop_reason max_tokens (the output
// limit cut the arguments off) the call is emitted with Truncated set, to be
// answered, not dispatched; otherwise as it is (the tool reports the error).
// Usage (input tokens including cache reads and writes, which are
// also reported apart) is emitted at the end, then the stop reason
// (providers.EventStop: end_turn and stop_sequence are StopEnd, tool_use
// StopToolUse, max_tokens and model_context_window_exceeded StopMaxTokens,
// refusal StopContentFilter, anything else StopOther). A stream that ends without
// message_stop is a broken stream (ErrConnection); a response with no text
// and no tool call is ErrEmptyResponse.
//
// The thinking blocks' signatures are available, once Next returned io.EOF,
// from the stream's ReasoningSignature method, for the caller to keep on the
// assistant message (providers.Message.ReasoningSignature).
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// The defaults and the environment variables of the anthropic provider.
const (
	Name             = "anthropic"
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultModel     = "claude-sonnet-4-5"
	DefaultMaxTokens = 50000
	// DefaultThinkingBudget is the largest thinking budget ThinkingBudget
	// gives (it gives half the response cap at most: 25,000 with the
	// default cap).
	DefaultThinkingBudget = 32000

	BaseURLEnv = providers.AnthropicBaseURLEnv
	APIKeyEnv  = providers.AnthropicAPIKeyEnv
	ModelEnv   = providers.AnthropicModelEnv
	// AuthTokenEnv holds a bearer token instead of an API key (gateways
	// such as Moonshot's Anthropic-compatible endpoint); ANTHROPIC_API_KEY
	// wins when both are set.
	AuthTokenEnv = providers.AnthropicAuthTokenEnv
)

// Config configures a Provider.
type Config struct {
	// Name is the provider's name (default "anthropic").
	Name string
	// BaseURL is the API base, without /v1 (default DefaultBaseURL).
	BaseURL string
	// APIKey is the key sent with each request.
	APIKey string
	// AuthToken, when set instead of APIKey, is sent as a bearer token.
	AuthToken string
	// APIKeyEnv names where the key came from, for error messages.
	APIKeyEnv string
	// Model is the model name (default DefaultModel).
	Model string
	// MaxTokens caps each response (default DefaultMaxTokens).
	MaxTokens int64
	// ThinkingBudget > 0 turns extended thinking on with that budget of
	// tokens (at least 1024, less than MaxTokens).
	ThinkingBudget int64
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

// Provider is the Anthropic ChatProvider.
type Provider struct {
	cfg    Config
	client anthropic.Client
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
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = APIKeyEnv
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %s: base URL %q is not an http(s) URL", cfg.Name, cfg.BaseURL)
	}
	if cfg.ThinkingBudget > 0 && (cfg.ThinkingBudget < 1024 || cfg.ThinkingBudget >= cfg.MaxTokens) {
		return nil, fmt.Errorf("provider %s: thinking budget %d must be at least 1024 and less than max tokens (%d)", cfg.Name, cfg.ThinkingBudget, cfg.MaxTokens)
	}
	httpClient := timeouts.Client(cfg.HTTPClient, cfg.Timeouts)
	opts := []option.RequestOption{
		// The registry resolves keys, base URL and headers: nothing comes
		// from the SDK's own environment variables or profiles.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/") + "/"),
		credential(cfg),
		option.WithHTTPClient(httpClient),
		// The agent loop retries whole steps.
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Provider{cfg: cfg, client: anthropic.NewClient(opts...)}, nil
}

// ThinkingBudget is the thinking budget for a model with the thinking
// capability and a response cap of maxTokens (0: DefaultMaxTokens): half
// the cap, at most DefaultThinkingBudget; 0 (thinking off) when that is
// under the API's minimum of 1024.
func ThinkingBudget(maxTokens int64) int64 {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if budget := min(int64(DefaultThinkingBudget), maxTokens/2); budget >= 1024 {
		return budget
	}
	return 0
}

// credential is the key, or else the bearer token, of cfg.
func credential(cfg Config) option.RequestOption {
	if cfg.APIKey == "" && cfg.AuthToken != "" {
		return option.WithAuthToken(cfg.AuthToken)
	}
	return option.WithAPIKey(cfg.APIKey)
}

// Name implements providers.ChatProvider.
func (p *Provider) Name() string { return p.cfg.Name }

// Model implements providers.ChatProvider.
func (p *Provider) Model() string { return p.cfg.Model }

// BaseURL is the API base URL requests go to.
func (p *Provider) BaseURL() string { return p.cfg.BaseURL }

// APIKeyEnv is what authentication errors name.
func (p *Provider) APIKeyEnv() string { return p.cfg.APIKeyEnv }

// MaxTokens is the cap of each response.
func (p *Provider) MaxTokens() int64 { return p.cfg.MaxTokens }

// ThinkingBudget is the thinking budget (0: thinking off).
func (p *Provider) ThinkingBudget() int64 { return p.cfg.ThinkingBudget }

// Stream implements providers.ChatProvider.
func (p *Provider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	if p.cfg.NoImageInput {
		req.History = providers.WithoutImages(req.History)
	}
	params, err := p.params(req)
	if err != nil {
		return nil, p.newError(providers.ErrBadRequest, 0, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	raw := p.client.Messages.NewStreaming(sctx, params)
	if err := raw.Err(); err != nil {
		cancel()
		_ = raw.Close()
		return nil, p.classify(ctx, err)
	}
	return &stream{ctx: ctx, cancel: cancel, p: p, raw: raw, blocks: map[int64]*block{}}, nil
}

func (p *Provider) newError(kind providers.ErrorKind, status int, err error) *providers.Error {
	return providers.NewError(p.cfg.Name, kind, status, p.cfg.APIKeyEnv, err)
}

func (p *Provider) ctxError(ctx context.Context) error {
	return providers.ContextError(ctx, p.cfg.Name)
}

var errTruncated = errors.New("the stream ended before the response was complete (no message_stop)")
