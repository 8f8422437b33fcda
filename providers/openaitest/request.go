package openaitest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Chat is the body decoded as a chat completions request.
	Chat ChatRequest
	// JSON is the body decoded generically, to assert fields Chat lacks or
	// whether a field is present at all.
	JSON map[string]any
}

// ChatRequest is a decoded chat completions request.
type ChatRequest struct {
	Model               string         `json:"model"`
	Messages            []Message      `json:"messages"`
	Tools               []Tool         `json:"tools"`
	Stream              bool           `json:"stream"`
	StreamOptions       *StreamOptions `json:"stream_options"`
	MaxTokens           int            `json:"max_tokens"`
	MaxCompletionTokens int            `json:"max_completion_tokens"`
}

// StreamOptions is the request's stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a request.
type Message struct {
	Role string `json:"role"`
	// Content is the raw content: nil when the field is absent, else
	// `null`, a JSON string or an array of parts.
	Content          json.RawMessage   `json:"content"`
	ReasoningContent *string           `json:"reasoning_content"`
	ToolCalls        []MessageToolCall `json:"tool_calls"`
	ToolCallID       string            `json:"tool_call_id"`
}

// Text is the message's text: the content string, or its text parts joined.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// MessageToolCall is a tool call on an assistant message of a request.
type MessageToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool offered in a request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}
