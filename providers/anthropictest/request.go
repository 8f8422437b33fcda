package anthropictest

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
	// Messages is the body decoded as a Messages API request.
	Messages MessagesRequest
	// JSON is the body decoded generically.
	JSON map[string]any
}

// MessagesRequest is a decoded Messages API request.
type MessagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []Message       `json:"messages"`
	Tools     []Tool          `json:"tools"`
	Thinking  json.RawMessage `json:"thinking"`
}

// SystemText is the system prompt: the string, or its text blocks joined.
func (r MessagesRequest) SystemText() string {
	var s string
	if json.Unmarshal(r.System, &s) == nil {
		return s
	}
	var blocks []ContentBlock
	_ = json.Unmarshal(r.System, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// Message is one message of a request.
type Message struct {
	Role    string
	Content []ContentBlock
}

// UnmarshalJSON accepts a string content as one text block.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	var s string
	if json.Unmarshal(raw.Content, &s) == nil {
		m.Content = []ContentBlock{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// Text joins the message's text blocks.
func (m Message) Text() string {
	var b strings.Builder
	for _, bl := range m.Content {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// ContentBlock is one content block of a request message.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   *bool           `json:"is_error"`
	// Content is a tool_result's content: a string or an array of blocks.
	Content      json.RawMessage `json:"content"`
	Source       json.RawMessage `json:"source"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// ResultText is a tool_result's text.
func (b ContentBlock) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var blocks []ContentBlock
	_ = json.Unmarshal(b.Content, &blocks)
	var out strings.Builder
	for _, bl := range blocks {
		out.WriteString(bl.Text)
	}
	return out.String()
}

// Tool is a tool offered in a request.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control"`
}
