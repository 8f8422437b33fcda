package google

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/kosong-host/kosong-host/providers"
)

// SkipSignature is Gemini's documented placeholder thought signature for
// function calls that have none (histories from other models).
const SkipSignature = "skip_thought_signature_validator"

const errorPrefix = "<system>ERROR:"

// generatedID is the id of call number idx of a response when Gemini gave
// none.
func generatedID(name string, idx int) string { return name + ":" + strconv.Itoa(idx) }

// isGeneratedID reports whether id has the form generatedID gives for name.
func isGeneratedID(id, name string) bool {
	rest, ok := strings.CutPrefix(id, name+":")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 32)
	return err == nil
}

func (p *Provider) request(req providers.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	automatic := false
	config := &genai.GenerateContentConfig{
		// A stream is one request: the loop retries failed steps.
		AutomaticContinuation: &automatic,
	}
	if strings.TrimSpace(req.System) != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if p.cfg.MaxTokens > 0 {
		config.MaxOutputTokens = p.cfg.MaxTokens
	}
	if p.level != "" {
		config.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingLevel: p.level}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			schema, err := Schema(t.Parameters)
			if err != nil {
				return nil, nil, fmt.Errorf("tool %s: %w", t.Name, err)
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, &genai.FunctionDeclaration{
				Name: t.Name, Description: t.Description, Parameters: schema,
			})
		}
		config.Tools = []*genai.Tool{tool}
	}
	contents, err := p.contents(req.History)
	if err != nil {
		return nil, nil, err
	}
	return contents, config, nil
}

// contents maps the history to alternating user and model contents.
func (p *Provider) contents(history []providers.Message) ([]*genai.Content, error) {
	names := map[string]string{} // call id -> function name
	for _, m := range history {
		for _, tc := range m.ToolCalls {
			names[tc.ID] = tc.Name
		}
	}
	var out []*genai.Content
	add := func(role string, parts []*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	for _, m := range history {
		switch m.Role {
		case providers.RoleSystem:
			if text := m.Text(); strings.TrimSpace(text) != "" {
				add(genai.RoleUser, []*genai.Part{{Text: "<system>" + text + "</system>"}})
			}
		case providers.RoleUser:
			add(genai.RoleUser, userParts(m.Content))
		case providers.RoleAssistant:
			add(genai.RoleModel, p.modelParts(m))
		case providers.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				if i := strings.LastIndex(m.ToolCallID, ":"); i > 0 && isGeneratedID(m.ToolCallID, m.ToolCallID[:i]) {
					name = m.ToolCallID[:i]
				} else {
					return nil, fmt.Errorf("tool message answers call %q, which no assistant message made", m.ToolCallID)
				}
			}
			fr := &genai.FunctionResponse{Name: name}
			if !isGeneratedID(m.ToolCallID, name) {
				fr.ID = m.ToolCallID
			}
			text := providers.JoinText(m.Content)
			if m.IsError || strings.HasPrefix(strings.TrimSpace(text), errorPrefix) {
				fr.Response = map[string]any{"error": text}
			} else {
				fr.Response = map[string]any{"output": text}
			}
			fr.Parts = responseMedia(m.Content)
			add(genai.RoleUser, []*genai.Part{{FunctionResponse: fr}})
		default:
			return nil, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	return out, nil
}

// modelParts maps an assistant message, putting its thought signatures
// back on the parts they came on.
func (p *Provider) modelParts(m providers.Message) []*genai.Part {
	sigs := decodeSignatures(m.ReasoningSignature)
	var parts []*genai.Part
	if len(sigs.Thought) > 0 {
		parts = append(parts, &genai.Part{Text: m.Reasoning, Thought: true, ThoughtSignature: sigs.Thought})
	}
	if text := m.Text(); text != "" || len(sigs.Text) > 0 {
		parts = append(parts, &genai.Part{Text: text, ThoughtSignature: sigs.Text})
	}
	signed := false
	for _, tc := range m.ToolCalls {
		args := callArgs(tc.Arguments)
		if tc.Truncated {
			args = map[string]any{}
		}
		fc := &genai.FunctionCall{Name: tc.Name, Args: args}
		if !isGeneratedID(tc.ID, tc.Name) {
			fc.ID = tc.ID
		}
		part := &genai.Part{FunctionCall: fc, ThoughtSignature: sigs.Calls[tc.ID]}
		signed = signed || len(part.ThoughtSignature) > 0
		parts = append(parts, part)
	}
	if !signed && len(m.ToolCalls) > 0 && isGemini3(p.cfg.Model) {
		for _, part := range parts {
			if part.FunctionCall != nil {
				part.ThoughtSignature = []byte(SkipSignature)
				break
			}
		}
	}
	return parts
}

// callArgs is a call's arguments as a JSON object ({} when they are not one).
func callArgs(args string) map[string]any {
	out := map[string]any{}
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			return m
		}
	}
	return out
}

func userParts(content []providers.ContentPart) []*genai.Part {
	var parts []*genai.Part
	for _, c := range content {
		switch c.Type {
		case providers.PartText:
			if c.Text != "" {
				parts = append(parts, &genai.Part{Text: c.Text})
			}
		case providers.PartImage:
			if media, data, ok := providers.ParseDataURL(c.ImageURL); ok {
				if b, err := base64.StdEncoding.DecodeString(data); err == nil {
					parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: media, Data: b}})
					continue
				}
			}
			if c.ImageURL != "" {
				parts = append(parts, &genai.Part{FileData: &genai.FileData{FileURI: c.ImageURL, MIMEType: mime.TypeByExtension(path.Ext(c.ImageURL))}})
			}
		}
	}
	return parts
}

// responseMedia are the images of a tool result, as function response parts
// (Gemini 3 reads media inside function responses); images given by an
// http(s) URL stay in the text.
func responseMedia(content []providers.ContentPart) []*genai.FunctionResponsePart {
	var parts []*genai.FunctionResponsePart
	for _, c := range content {
		if c.Type != providers.PartImage {
			continue
		}
		if media, data, ok := providers.ParseDataURL(c.ImageURL); ok {
			if b, err := base64.StdEncoding.DecodeString(data); err == nil {
				parts = append(parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: media, Data: b}})
			}
		}
	}
	return parts
}
