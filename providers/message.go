// Package providers holds the chat message model shared by the agent loop
// and every chat provider, and the ChatProvider interface they implement.
package providers

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Role is the author of a message.
type Role string

// The roles of the chat message model.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType says what a ContentPart carries.
type PartType string

// The content part types.
const (
	PartText  PartType = "text"
	PartImage PartType = "image_url"
)

// ContentPart is one piece of a message's content.
type ContentPart struct {
	Type PartType `json:"type"`
	// Text is set for PartText.
	Text string `json:"text,omitempty"`
	// ImageURL is set for PartImage: an http(s) URL or a data: URL.
	ImageURL string `json:"image_url,omitempty"`
}

// IsImageType reports whether media is an image type the providers take
// inline: PNG, JPEG, GIF or WebP.
func IsImageType(media string) bool {
	switch media {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// DataURL is the data:MEDIA;base64,DATA URL of data, as ParseDataURL reads it.
func DataURL(media string, data []byte) string {
	return "data:" + media + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// ParseDataURL splits an image URL of the form data:MEDIA;base64,DATA; ok
// is false for any other URL.
func ParseDataURL(u string) (media, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	media, ok = strings.CutSuffix(head, ";base64")
	return media, data, ok
}

// TextPart returns a text content part.
func TextPart(s string) ContentPart { return ContentPart{Type: PartText, Text: s} }

// ToolCall is a tool call made by the model. Arguments is the raw JSON text
// exactly as the model produced it; ID is kept verbatim.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Truncated marks a call whose arguments the model did not finish because
	// the response hit its output limit (StopMaxTokens). Such a call is never
	// dispatched; the loop answers it with a result saying it was cut off.
	// Providers send a truncated call's Arguments back as "{}" when the API
	// needs valid JSON there.
	Truncated bool `json:"truncated,omitempty"`
}

// Message is one entry of the conversation history.
type Message struct {
	Role    Role          `json:"role"`
	Content []ContentPart `json:"content,omitempty"`
	// ToolCalls is set on assistant messages that call tools.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is set on tool messages: the id of the call answered.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Reasoning is the model's reasoning content (reasoning_content), kept
	// on assistant messages and sent back to providers that expect it.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningSignature is opaque provider data that authenticates the
	// reasoning when it is sent back, kept on assistant messages: Anthropic's
	// thinking-block signature (or a JSON object {"anthropic": [blocks]} when
	// a response had several or redacted thinking blocks), or Gemini's thought
	// signatures as a JSON object {"gemini": {...}}. Each provider reads only
	// its own form and ignores the others'. Providers whose streams have it
	// expose it as a ReasoningSignature() string method, valid once Next has
	// returned io.EOF.
	ReasoningSignature string `json:"reasoning_signature,omitempty"`
	// IsError is set on tool messages whose result is an error (sent as
	// is_error to Anthropic, as an "error" function response to Gemini).
	IsError bool `json:"is_error,omitempty"`
}

// Text joins the message's text parts.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Usage is the token usage of one model response.
type Usage struct {
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheReadTokens     int64 `json:"cache_read_tokens,omitempty"`
	CacheCreationTokens int64 `json:"cache_creation_tokens,omitempty"`
}

// Total is input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// ToolDef is a tool as the model sees it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}
