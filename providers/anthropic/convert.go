package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/kosong-host/kosong-host/providers"
)

// errorPrefix starts the text of a failed tool's message in histories
// written before providers.Message.IsError existed.
const errorPrefix = "<system>ERROR:"

// IsErrorResult reports whether tool message m is an error result:
// m.IsError, or a text starting with "<system>ERROR:".
func IsErrorResult(m providers.Message) bool {
	return m.IsError || strings.HasPrefix(strings.TrimSpace(m.Text()), errorPrefix)
}

func (p *Provider) params(req providers.Request) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.cfg.Model),
		MaxTokens: p.cfg.MaxTokens,
	}
	if strings.TrimSpace(req.System) != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	msgs, err := convertHistory(req.History)
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	for _, t := range req.Tools {
		schema, err := InputSchema(t.Parameters)
		if err != nil {
			return params, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		in := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type":
			case "properties":
				in.Properties = v
			case "required":
				for _, r := range asSlice(v) {
					if s, ok := r.(string); ok {
						in.Required = append(in.Required, s)
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	if p.cfg.ThinkingBudget > 0 && !unsignedToolTurn(req.History) {
		params.Thinking = anthropic.ThinkingConfigParamUnion{OfEnabled: &anthropic.ThinkingConfigEnabledParam{BudgetTokens: p.cfg.ThinkingBudget}}
	}
	return params, nil
}

// unsignedToolTurn reports a history that continues a tool-using assistant
// message without Anthropic thinking blocks (its reasoning came from
// another provider, or was not kept). With thinking on, the API wants such
// a message to start with its thinking block, so the request goes without
// thinking instead of failing.
func unsignedToolTurn(history []providers.Message) bool {
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		switch m.Role {
		case providers.RoleTool:
			continue
		case providers.RoleAssistant:
			return len(m.ToolCalls) > 0 && i < len(history)-1 && len(thinkingBlocks(m)) == 0
		}
		return false
	}
	return false
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

type turn struct {
	assistant bool
	blocks    []anthropic.ContentBlockParamUnion
}

// convertHistory maps the history to strictly alternating user and
// assistant messages.
func convertHistory(history []providers.Message) ([]anthropic.MessageParam, error) {
	var turns []turn
	add := func(assistant bool, blocks []anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].assistant == assistant {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{assistant: assistant, blocks: blocks})
	}
	for _, m := range history {
		switch m.Role {
		case providers.RoleSystem:
			if text := m.Text(); strings.TrimSpace(text) != "" {
				add(false, []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock("<system>" + text + "</system>")})
			}
		case providers.RoleUser:
			add(false, contentBlocks(m.Content))
		case providers.RoleAssistant:
			blocks := thinkingBlocks(m)
			if text := m.Text(); strings.TrimSpace(text) != "" {
				blocks = append(blocks, anthropic.NewTextBlock(text))
			}
			for _, tc := range m.ToolCalls {
				input := toolInput(tc.Arguments)
				if tc.Truncated {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			add(true, blocks)
		case providers.RoleTool:
			result := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			for _, b := range contentBlocks(m.Content) {
				switch {
				case b.OfText != nil:
					result.Content = append(result.Content, anthropic.ToolResultBlockParamContentUnion{OfText: b.OfText})
				case b.OfImage != nil:
					result.Content = append(result.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
				}
			}
			if IsErrorResult(m) {
				result.IsError = anthropic.Bool(true)
			}
			add(false, []anthropic.ContentBlockParamUnion{{OfToolResult: &result}})
		default:
			return nil, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	out := make([]anthropic.MessageParam, 0, len(turns))
	for i, t := range turns {
		if i == len(turns)-1 {
			markLastCacheable(t.blocks)
		}
		if t.assistant {
			out = append(out, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: t.blocks}})
		} else {
			out = append(out, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: t.blocks}})
		}
	}
	return out, nil
}

// markLastCacheable sets a cache breakpoint on the last block that takes one.
func markLastCacheable(blocks []anthropic.ContentBlockParamUnion) {
	for i := len(blocks) - 1; i >= 0; i-- {
		if cc := blocks[i].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
			return
		}
	}
}

// contentBlocks maps text and image parts; empty texts are left out (the
// API rejects them).
func contentBlocks(parts []providers.ContentPart) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case providers.PartText:
			if strings.TrimSpace(p.Text) != "" {
				out = append(out, anthropic.NewTextBlock(p.Text))
			}
		case providers.PartImage:
			if media, data, ok := providers.ParseDataURL(p.ImageURL); ok {
				out = append(out, anthropic.NewImageBlockBase64(media, data))
			} else if p.ImageURL != "" {
				out = append(out, anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: p.ImageURL}))
			}
		}
	}
	return out
}

// toolInput is a call's arguments as the tool_use input: the JSON object,
// or {} when the arguments are empty or not a JSON object.
func toolInput(args string) json.RawMessage {
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return json.RawMessage(raw)
	}
	return json.RawMessage(`{}`)
}

// storedBlock is a thinking or redacted_thinking block kept in
// Message.ReasoningSignature as {"anthropic": [blocks]}.
type storedBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type storedSignature struct {
	Anthropic []storedBlock `json:"anthropic"`
}

// encodeSignature is the ReasoningSignature of a response's thinking
// blocks: the signature alone for one signed thinking block whose text is
// the whole reasoning, else the blocks as JSON.
func encodeSignature(blocks []storedBlock, reasoning string) string {
	if len(blocks) == 0 {
		return ""
	}
	if len(blocks) == 1 && blocks[0].Type == "thinking" && blocks[0].Thinking == reasoning && !strings.HasPrefix(blocks[0].Signature, "{") {
		return blocks[0].Signature
	}
	b, err := json.Marshal(storedSignature{Anthropic: blocks})
	if err != nil {
		return ""
	}
	return string(b)
}

// thinkingBlocks are the thinking blocks to send back for assistant message
// m: none unless its ReasoningSignature is Anthropic's (reasoning from
// another provider cannot be signed, so it is not sent).
func thinkingBlocks(m providers.Message) []anthropic.ContentBlockParamUnion {
	sig := strings.TrimSpace(m.ReasoningSignature)
	if sig == "" {
		return nil
	}
	if !strings.HasPrefix(sig, "{") {
		return []anthropic.ContentBlockParamUnion{anthropic.NewThinkingBlock(sig, m.Reasoning)}
	}
	var stored storedSignature
	if json.Unmarshal([]byte(sig), &stored) != nil {
		return nil
	}
	var out []anthropic.ContentBlockParamUnion
	for _, b := range stored.Anthropic {
		switch b.Type {
		case "thinking":
			if b.Signature != "" {
				out = append(out, anthropic.NewThinkingBlock(b.Signature, b.Thinking))
			}
		case "redacted_thinking":
			out = append(out, anthropic.NewRedactedThinkingBlock(b.Data))
		}
	}
	return out
}
