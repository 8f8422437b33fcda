package openaitest

import (
	"encoding/json"
	"fmt"
)

// fragment is one tool call delta.
type fragment struct {
	call    int // position of the call in Response.ToolCalls
	index   int
	id      string
	typ     bool
	name    string
	args    string
	hasArgs bool
}

func (f fragment) json(q Quirks) map[string]any {
	m := map[string]any{}
	if !q.MissingIndex {
		m["index"] = f.index
	}
	if f.id != "" {
		m["id"] = f.id
	}
	if f.typ {
		m["type"] = "function"
	}
	fn := map[string]any{}
	if f.name != "" {
		fn["name"] = f.name
	}
	if f.hasArgs {
		fn["arguments"] = f.args
	}
	m["function"] = fn
	return m
}

// ToolCallID is the id the server sends for call i of resp (empty with
// Quirks.OmitIDs).
func ToolCallID(resp Response, i int) string {
	if resp.Quirks.OmitIDs {
		return ""
	}
	return defaultID(resp, i)
}

func defaultID(resp Response, i int) string {
	tc := resp.ToolCalls[i]
	switch {
	case tc.ID != "":
		return tc.ID
	case resp.Quirks.KimiIDs:
		return fmt.Sprintf("functions.%s:%d", tc.Name, i)
	default:
		return fmt.Sprintf("call_%d", i)
	}
}

func split(s string, n int) []string {
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func fragmentsOf(resp Response, i int) []fragment {
	q := resp.Quirks
	tc := resp.ToolCalls[i]
	index := i
	if q.FirstIndexOne {
		index++
	}
	id := ToolCallID(resp, i)
	pieces := split(tc.Arguments, q.SplitArguments)
	var frags []fragment
	head := fragment{call: i, index: index, id: id, typ: true, name: tc.Name, hasArgs: true}
	if q.NameLater {
		frags = append(frags, fragment{call: i, index: index, id: id, typ: true})
		head = fragment{call: i, index: index, name: tc.Name, hasArgs: true}
	}
	if q.ArgumentsWithName {
		head.args = pieces[0]
		pieces = pieces[1:]
	}
	frags = append(frags, head)
	for _, p := range pieces {
		if p == "" {
			continue
		}
		frags = append(frags, fragment{call: i, index: index, args: p, hasArgs: true})
	}
	return frags
}

// toolCallFragments lays out every call's fragments, sequentially or round
// robin, and groups them into chunks.
func toolCallFragments(resp Response) [][]fragment {
	perCall := make([][]fragment, len(resp.ToolCalls))
	for i := range resp.ToolCalls {
		perCall[i] = fragmentsOf(resp, i)
	}
	var order []fragment
	if resp.Quirks.Interleave {
		for more := true; more; {
			more = false
			for i := range perCall {
				if len(perCall[i]) > 0 {
					order = append(order, perCall[i][0])
					perCall[i] = perCall[i][1:]
					more = true
				}
			}
		}
	} else {
		for _, fs := range perCall {
			order = append(order, fs...)
		}
	}
	var chunks [][]fragment
	for _, f := range order {
		last := len(chunks) - 1
		if resp.Quirks.TwoFragmentsPerChunk && last >= 0 && len(chunks[last]) == 1 && chunks[last][0].call == f.call {
			chunks[last] = append(chunks[last], f)
			continue
		}
		chunks = append(chunks, []fragment{f})
	}
	return chunks
}

func usageJSON(u *Usage) map[string]any {
	m := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
	if u.CachedTokens != 0 {
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CachedTokens}
	}
	return m
}

// Chunks returns the JSON of every data chunk the server streams for resp,
// in order ([DONE] and comment lines not included). Tests can use it to find
// the chunk number of an event, e.g. for Response.AfterChunk.
func Chunks(model string, resp Response) []string {
	q := resp.Quirks
	finish := resp.FinishReason
	if finish == "" {
		finish = "stop"
		if len(resp.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	type choiceChunk struct {
		delta  map[string]any
		finish bool
		usage  bool
	}
	var cs []choiceChunk
	first := map[string]any{"role": "assistant", "content": ""}
	if q.NullContent {
		first["content"] = nil
	}
	cs = append(cs, choiceChunk{delta: first})
	for _, r := range resp.Reasoning {
		cs = append(cs, choiceChunk{delta: map[string]any{"reasoning_content": r}})
	}
	for _, t := range resp.Text {
		cs = append(cs, choiceChunk{delta: map[string]any{"content": t}})
	}
	for _, frags := range toolCallFragments(resp) {
		calls := make([]any, len(frags))
		for i, f := range frags {
			calls[i] = f.json(q)
		}
		delta := map[string]any{"tool_calls": calls}
		if q.NullContent {
			delta["content"] = nil
		}
		cs = append(cs, choiceChunk{delta: delta})
		if q.NullContent {
			cs = append(cs, choiceChunk{delta: map[string]any{"content": nil}})
		}
	}
	cs = append(cs, choiceChunk{delta: map[string]any{}, finish: true, usage: resp.Usage != nil && q.UsageInChoice})

	out := make([]string, 0, len(cs)+1)
	for _, c := range cs {
		choice := map[string]any{"index": 0, "delta": c.delta, "finish_reason": nil}
		if c.finish || q.FinishEveryChunk {
			choice["finish_reason"] = finish
		}
		if c.usage {
			choice["usage"] = usageJSON(resp.Usage)
		}
		out = append(out, marshal(model, []any{choice}, nil))
	}
	if resp.Usage != nil && !q.UsageInChoice {
		out = append(out, marshal(model, []any{}, usageJSON(resp.Usage)))
	}
	return out
}

func marshal(model string, choices []any, usage map[string]any) string {
	m := map[string]any{
		"id":      "chatcmpl-openaitest",
		"object":  "chat.completion.chunk",
		"created": 1700000000,
		"model":   model,
		"choices": choices,
	}
	if usage != nil {
		m["usage"] = usage
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // only plain values above
	}
	return string(b)
}
