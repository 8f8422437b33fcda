package googletest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	// Model is the model named in the path.
	Model string
	// Body is the raw request body.
	Body []byte
	// Generate is the body decoded as a generateContent request.
	Generate GenerateRequest
	// JSON is the body decoded generically.
	JSON map[string]any
}

// GenerateRequest is a decoded generateContent request.
type GenerateRequest struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction"`
	Tools             []Tool            `json:"tools"`
	GenerationConfig  *GenerationConfig `json:"generationConfig"`
}

// Content is one content of a request.
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Text joins the content's non-thought text parts.
func (c Content) Text() string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Part is one part of a content. ThoughtSignature is decoded from base64.
type Part struct {
	Text             string            `json:"text"`
	Thought          bool              `json:"thought"`
	ThoughtSignature []byte            `json:"thoughtSignature"`
	FunctionCall     *FunctionCall     `json:"functionCall"`
	FunctionResponse *FunctionResponse `json:"functionResponse"`
	InlineData       *struct {
		MIMEType string `json:"mimeType"`
		Data     []byte `json:"data"`
	} `json:"inlineData"`
}

// FunctionCall is a functionCall part's.
type FunctionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// FunctionResponse is a functionResponse part's.
type FunctionResponse struct {
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
	// Parts are the response's media.
	Parts []struct {
		InlineData *struct {
			MIMEType string `json:"mimeType"`
			Data     []byte `json:"data"`
		} `json:"inlineData"`
	} `json:"parts"`
}

// Tool is a tool of a request.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations"`
}

// FunctionDeclaration is a function offered in a request.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Parameters           json.RawMessage `json:"parameters"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

// GenerationConfig is a request's generationConfig.
type GenerationConfig struct {
	MaxOutputTokens int `json:"maxOutputTokens"`
	ThinkingConfig  *struct {
		IncludeThoughts bool   `json:"includeThoughts"`
		ThinkingLevel   string `json:"thinkingLevel"`
	} `json:"thinkingConfig"`
}
