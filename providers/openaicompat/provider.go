// Package openaicompat is a ChatProvider for OpenAI-compatible chat
// completions APIs (Kimi/Moonshot, OpenAI and look-alikes), built on
// github.com/sashabaranov/go-openai.
//
// The provider streams every response and does not retry: the agent loop
// retries whole steps (see providers.Retry). Errors are *providers.Error.
//
// # When tool calls are emitted
//
// Tool call fragments are accumulated per call (by index, or by id when a
// server leaves the index out or reuses it). A call is emitted
// (providers.EventToolCall) as soon as it is known to be complete:
//
//   - when a fragment of another call arrives and the call has a name and
//     its arguments parse as complete JSON. A JSON object cannot grow once
//     it parses, so this is safe with interleaved parallel calls
//     (0, 1, 0, 1...): a call whose arguments are still partial waits;
//   - when a chunk carries a finish_reason, with the same test (servers that
//     put finish_reason on every chunk cannot make a partial call leave);
//   - at the end of the stream, whatever its arguments (a call with invalid
//     JSON arguments is still emitted; the tool reports the error). When
//     the finish_reason is "length" (the output limit), a call whose
//     arguments are not complete JSON is emitted with Truncated set, to be
//     answered, not dispatched.
//
// While a call streams, each fragment is also emitted as a
// providers.EventToolCallPart: the first once the call's name is known
// (with the arguments so far; a call whose first fragment has no id gets
// one made up here, kept even if the server sends an id later), then one
// per fragment with arguments, and the rest, if any, just before the call.
//
// The finish_reason is mapped to a providers.StopReason (stop, tool_calls,
// length, content_filter; anything else is StopOther) and emitted as the
// last event (providers.EventStop), after the usage.
//
// Calls are emitted in call order, each exactly once. A fragment with
// arguments that arrives for a call already emitted is a protocol error
// (*providers.Error, ErrServer, retryable). A call without id gets a
// generated one (call_ + random hex) that the history keeps.
package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// Preset is the defaults of a known OpenAI-compatible service.
type Preset struct {
	Name    string
	BaseURL string
	Model   string
	// The environment variables that override the base URL and the model
	// and hold the API key.
	BaseURLEnv string
	APIKeyEnv  string
	ModelEnv   string
}

// The known services.
var (
	Kimi = Preset{
		Name: "kimi", BaseURL: "https://api.moonshot.ai/v1", Model: "kimi-k2-turbo-preview",
		BaseURLEnv: providers.KimiBaseURLEnv, APIKeyEnv: providers.KimiAPIKeyEnv, ModelEnv: providers.KimiModelEnv,
	}
	OpenAI = Preset{
		Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-5",
		BaseURLEnv: providers.OpenAIBaseURLEnv, APIKeyEnv: providers.OpenAIAPIKeyEnv, ModelEnv: providers.OpenAIModelEnv,
	}
)

// Presets lists the known services in the order a provider is picked
// automatically: kimi first, then openai.
func Presets() []Preset { return []Preset{Kimi, OpenAI} }

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// EmptyToolOutput is sent as the content of a tool message whose output is
// empty (go-openai drops an empty content, which servers reject).
const EmptyToolOutput = "<system>Tool output is empty.</system>"

// Config configures a Provider.
type Config struct {
	// Name is the provider's name: kimi, openai, or anything for another
	// compatible server (default "openai-compatible"). For kimi and openai,
	// an empty BaseURL, Model or APIKeyEnv takes the preset's value.
	Name string
	// BaseURL is the API base, e.g. https://api.moonshot.ai/v1.
	BaseURL string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// APIKeyEnv names the variable the key came from, for error messages.
	APIKeyEnv string
	// Model is the model name sent with each request.
	Model string
	// HTTPClient is the client requests go through (default: a plain
	// one); Timeouts are enforced on top of it.
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers map[string]string
	// Timeouts bound the waits on the API (zero values: the defaults of
	// providers/timeouts).
	Timeouts timeouts.Timeouts
	// NoImageInput says the model takes no images: each image in the
	// history is sent as providers.ImagePlaceholder text instead.
	NoImageInput bool
	// MaxTokens, when > 0, caps the response: sent as max_completion_tokens
	// to openai and to reasoning models (o1, o3, o4, gpt-5, gpt-6), as
	// max_tokens elsewhere.
	MaxTokens int
}

// Provider is an OpenAI-compatible ChatProvider.
type Provider struct {
	cfg  Config
	http *http.Client
}

var _ providers.ChatProvider = (*Provider)(nil)

// New checks cfg, fills preset defaults and returns the provider. It does
// not require an API key (local servers need none).
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = "openai-compatible"
	}
	if preset, ok := LookupPreset(cfg.Name); ok {
		if cfg.BaseURL == "" {
			cfg.BaseURL = preset.BaseURL
		}
		if cfg.Model == "" {
			cfg.Model = preset.Model
		}
		if cfg.APIKeyEnv == "" {
			cfg.APIKeyEnv = preset.APIKeyEnv
		}
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("provider %s: no model configured", cfg.Name)
	}
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("provider %s: no base URL configured", cfg.Name)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %s: base URL %q is not an http(s) URL", cfg.Name, cfg.BaseURL)
	}
	return &Provider{cfg: cfg, http: timeouts.Client(withHeaders(cfg.HTTPClient, cfg.Headers), cfg.Timeouts)}, nil
}

// withHeaders returns a copy of c (nil: a plain client) whose transport
// adds headers to every request; c itself when there are none.
func withHeaders(c *http.Client, headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return c
	}
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = headerTransport{base: base, headers: headers}
	return out
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// Name implements providers.ChatProvider.
func (p *Provider) Name() string { return p.cfg.Name }

// Model implements providers.ChatProvider.
func (p *Provider) Model() string { return p.cfg.Model }

// BaseURL is the API base URL requests go to.
func (p *Provider) BaseURL() string { return p.cfg.BaseURL }

// APIKeyEnv is the variable named in authentication errors.
func (p *Provider) APIKeyEnv() string { return p.cfg.APIKeyEnv }

// Stream implements providers.ChatProvider: it sends the request and returns
// the streamed response. A failure to get a stream is a *providers.Error,
// or the context's error when ctx ended.
func (p *Provider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	if p.cfg.NoImageInput {
		req.History = providers.WithoutImages(req.History)
	}
	creq, err := p.chatRequest(req)
	if err != nil {
		return nil, p.newError(providers.ErrBadRequest, 0, err)
	}
	w := &watch{}
	cc := openai.DefaultConfig(p.cfg.APIKey)
	cc.BaseURL = p.cfg.BaseURL
	cc.HTTPClient = &watchingDoer{client: p.http, w: w}
	// go-openai counts blank and comment lines (`: keep-alive`) between
	// two data lines and gives up past the limit; a slow model behind a
	// chatty proxy must not fail for that.
	cc.EmptyMessagesLimit = ^uint(0)
	raw, err := openai.NewClientWithConfig(cc).CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return nil, p.requestError(ctx, err, w)
	}
	return newStream(ctx, p, raw, w), nil
}

func (p *Provider) chatRequest(req providers.Request) (openai.ChatCompletionRequest, error) {
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.History)+1)
	if req.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	// The images of a step's tool results follow its tool messages, in one
	// user message: chat completions takes no image in a tool message.
	var images []openai.ChatMessagePart
	flushImages := func() {
		if len(images) > 0 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, MultiContent: images})
			images = nil
		}
	}
	for _, m := range req.History {
		if m.Role != providers.RoleTool {
			flushImages()
		}
		msgs = append(msgs, convertMessage(m))
		if m.Role == providers.RoleTool {
			images = append(images, resultImages(m)...)
		}
	}
	flushImages()
	var tools []openai.Tool
	for _, t := range req.Tools {
		params := json.RawMessage(bytes.TrimSpace(t.Parameters))
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if !json.Valid(params) {
			return openai.ChatCompletionRequest{}, fmt.Errorf("tool %s: parameters schema is not valid JSON", t.Name)
		}
		tools = append(tools, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        t.Name,
				Description: t.Description,
				Parameters:  params,
			},
		})
	}
	cr := openai.ChatCompletionRequest{
		Model:         p.cfg.Model,
		Messages:      msgs,
		Tools:         tools,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if p.cfg.MaxTokens > 0 {
		if p.cfg.Name == OpenAI.Name || isReasoningModel(p.cfg.Model) {
			cr.MaxCompletionTokens = p.cfg.MaxTokens
		} else {
			cr.MaxTokens = p.cfg.MaxTokens
		}
	}
	return cr, nil
}

// isReasoningModel matches the models go-openai refuses max_tokens for.
func isReasoningModel(model string) bool {
	for _, prefix := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, prefix) {
			return true
		}
	}
	return false
}

// convertMessage maps one history message to the wire. Tool call ids go
// back verbatim; an assistant message with tool calls and no text has no
// content field (go-openai omits it, as the API allows); empty arguments,
// and those of a call cut off by the output limit, go as "{}" (the field is
// required, and servers parse it); a tool message's text parts are joined
// with newlines, an empty tool output gets a placeholder, and a result with
// images says they follow (see resultImages).
func convertMessage(m providers.Message) openai.ChatCompletionMessage {
	om := openai.ChatCompletionMessage{Role: string(m.Role)}
	switch m.Role {
	case providers.RoleAssistant:
		om.Content = m.Text()
		om.ReasoningContent = m.Reasoning
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" || tc.Truncated {
				args = "{}"
			}
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID:       tc.ID,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: args},
			})
		}
	case providers.RoleTool:
		om.ToolCallID = m.ToolCallID
		om.Content = providers.JoinText(m.Content)
		if n := countImages(m.Content); n > 0 {
			if om.Content != "" {
				om.Content += "\n"
			}
			om.Content += fmt.Sprintf(imagesFollow, n, plural(n))
		} else if strings.TrimSpace(om.Content) == "" {
			om.Content = EmptyToolOutput
		}
	default:
		if hasImage(m.Content) {
			om.MultiContent = convertParts(m.Content)
		} else {
			om.Content = m.Text()
		}
	}
	return om
}

// imagesFollow ends the text of a tool message whose result has images.
const imagesFollow = "<system>This result has %d image%s, sent in the user message after the tool results.</system>"

// resultImages are the images of tool message m for the user message that
// follows the step's tool messages, introduced by a text naming the call.
func resultImages(m providers.Message) []openai.ChatMessagePart {
	n := countImages(m.Content)
	if n == 0 {
		return nil
	}
	out := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText,
		Text: fmt.Sprintf("<system>The image%s of the result of tool call %s:</system>", plural(n), m.ToolCallID)}}
	for _, p := range m.Content {
		if p.Type == providers.PartImage {
			out = append(out, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: p.ImageURL}})
		}
	}
	return out
}

func countImages(parts []providers.ContentPart) int {
	n := 0
	for _, p := range parts {
		if p.Type == providers.PartImage {
			n++
		}
	}
	return n
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func hasImage(parts []providers.ContentPart) bool {
	for _, p := range parts {
		if p.Type == providers.PartImage {
			return true
		}
	}
	return false
}

func convertParts(parts []providers.ContentPart) []openai.ChatMessagePart {
	out := make([]openai.ChatMessagePart, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case providers.PartText:
			out = append(out, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: p.Text})
		case providers.PartImage:
			out = append(out, openai.ChatMessagePart{
				Type:     openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: p.ImageURL},
			})
		}
	}
	return out
}

func (p *Provider) newError(kind providers.ErrorKind, status int, err error) *providers.Error {
	return providers.NewError(p.cfg.Name, kind, status, p.cfg.APIKeyEnv, err)
}

func (p *Provider) ctxError(ctx context.Context) error {
	return providers.ContextError(ctx, p.cfg.Name)
}

var errTruncated = errors.New("the stream ended before the response was complete (no finish_reason, no [DONE])")
