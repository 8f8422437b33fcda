package registry_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// The scripted conversation: the model says something and makes two calls;
// one succeeds, one fails; the model then answers.
var (
	scriptCalls = []struct{ name, args string }{
		{"Shell", `{"command":"ls"}`},
		{"ReadFile", `{"path":"missing.txt"}`},
	}
	scriptResults = []struct {
		text    string
		isError bool
	}{
		{"a.txt\nb.txt", false},
		{"<system>ERROR: missing.txt does not exist</system>", true},
	}
)

// wireTurn is a request message in a provider-neutral form: a user or
// assistant message, or the results of tool calls (which OpenAI sends as
// one message each, Anthropic and Gemini as one user message).
type wireTurn struct {
	Role    string // user, assistant, results
	Text    string
	Calls   []string // name + canonical arguments
	Results []string // output, prefixed with "error: " for an error result
}

func canonical(t *testing.T, args string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func result(text string, isError bool) string {
	if isError {
		return "error: " + text
	}
	return text
}

type crossCase struct {
	name string
	// start returns the provider talking to a fake server scripted with
	// the two responses, and a function giving the second request in
	// neutral form.
	start func(t *testing.T) (providers.ChatProvider, func() []wireTurn)
}

var crossCases = []crossCase{
	{name: "openai", start: func(t *testing.T) (providers.ChatProvider, func() []wireTurn) {
		var calls []openaitest.ToolCall
		for i, c := range scriptCalls {
			calls = append(calls, openaitest.ToolCall{ID: "call_" + string(rune('a'+i)), Name: c.name, Arguments: c.args})
		}
		srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Let me ", "look."}, ToolCalls: calls, Quirks: openaitest.Quirks{SplitArguments: 4}},
			openaitest.Response{Text: []string{"Done."}})
		p, err := openaicompat.New(openaicompat.Config{Name: "openai", BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return p, func() []wireTurn {
			var out []wireTurn
			for _, m := range srv.LastRequest(t).Chat.Messages {
				switch m.Role {
				case "system": // the others send it apart
				case "tool":
					text := m.Text()
					r := result(text, strings.HasPrefix(text, "<system>ERROR:"))
					if n := len(out); n > 0 && out[n-1].Role == "results" {
						out[n-1].Results = append(out[n-1].Results, r)
					} else {
						out = append(out, wireTurn{Role: "results", Results: []string{r}})
					}
				default:
					w := wireTurn{Role: m.Role, Text: m.Text()}
					for _, tc := range m.ToolCalls {
						w.Calls = append(w.Calls, tc.Function.Name+canonical(t, tc.Function.Arguments))
					}
					out = append(out, w)
				}
			}
			return out
		}
	}},
	{name: "anthropic", start: func(t *testing.T) (providers.ChatProvider, func() []wireTurn) {
		blocks := []anthropictest.Block{anthropictest.Text("Let me ", "look.")}
		for i, c := range scriptCalls {
			blocks = append(blocks, anthropictest.ToolUse("toolu_"+string(rune('a'+i)), c.name, c.args, 4))
		}
		srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: blocks},
			anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("Done.")}})
		p, err := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "k", HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return p, func() []wireTurn {
			var out []wireTurn
			for _, m := range srv.LastRequest(t).Messages.Messages {
				w := wireTurn{Role: m.Role, Text: m.Text()}
				for _, b := range m.Content {
					switch b.Type {
					case "tool_use":
						w.Calls = append(w.Calls, b.Name+canonical(t, string(b.Input)))
					case "tool_result":
						w.Role = "results"
						w.Results = append(w.Results, result(b.ResultText(), b.IsError != nil && *b.IsError))
					}
				}
				out = append(out, w)
			}
			return out
		}
	}},
	{name: "google", start: func(t *testing.T) (providers.ChatProvider, func() []wireTurn) {
		var calls []googletest.Call
		for _, c := range scriptCalls {
			calls = append(calls, googletest.Call{Name: c.name, Args: c.args})
		}
		calls[0].Signature = "sig"
		srv := googletest.NewServer(t, googletest.Response{Text: []string{"Let me ", "look."}, Calls: calls, CallsInOneChunk: true},
			googletest.Response{Text: []string{"Done."}})
		p, err := google.New(google.Config{BaseURL: srv.BaseURL(), APIKey: "k", HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		return p, func() []wireTurn {
			var out []wireTurn
			for _, c := range srv.LastRequest(t).Generate.Contents {
				role := map[string]string{"user": "user", "model": "assistant"}[c.Role]
				w := wireTurn{Role: role, Text: c.Text()}
				for _, part := range c.Parts {
					switch {
					case part.FunctionCall != nil:
						w.Calls = append(w.Calls, part.FunctionCall.Name+canonical(t, string(part.FunctionCall.Args)))
					case part.FunctionResponse != nil:
						w.Role = "results"
						r := part.FunctionResponse.Response
						if e, ok := r["error"].(string); ok {
							w.Results = append(w.Results, result(e, true))
						} else {
							w.Results = append(w.Results, result(r["output"].(string), false))
						}
					}
				}
				out = append(out, w)
			}
			return out
		}
	}},
}

// step plays the agent loop's part for one response: the assistant
// message, as the loop builds it from the events.
func step(t *testing.T, p providers.ChatProvider, history []providers.Message) providers.Message {
	t.Helper()
	s, err := p.Stream(context.Background(), providers.Request{System: "sys", History: history})
	if err != nil {
		t.Fatal(err)
	}
	r := streamtest.Drain(s, nil)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	streamtest.CheckParts(t, r)
	msg := providers.Message{Role: providers.RoleAssistant, Reasoning: r.Reasoning, ToolCalls: r.Calls, ReasoningSignature: r.Signature}
	if r.Text != "" {
		msg.Content = []providers.ContentPart{providers.TextPart(r.Text)}
	}
	return msg
}

// historyShape is the history in a provider-neutral form (tool call ids
// are the providers' own).
func historyShape(t *testing.T, history []providers.Message) []string {
	var out []string
	ids := map[string]string{}
	for _, m := range history {
		line := string(m.Role) + ":" + m.Text()
		for _, tc := range m.ToolCalls {
			ids[tc.ID] = tc.Name
			line += " call " + tc.Name + canonical(t, tc.Arguments)
		}
		if m.Role == providers.RoleTool {
			line += " answers " + ids[m.ToolCallID]
			if m.IsError {
				line += " (error)"
			}
		}
		out = append(out, line)
	}
	return out
}

func TestSameConversationAcrossProviders(t *testing.T) {
	var firstShape []string
	var firstWire []wireTurn
	var firstCalls []string
	for _, c := range crossCases {
		t.Run(c.name, func(t *testing.T) {
			p, secondRequest := c.start(t)
			history := []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("List and read.")}}}
			a := step(t, p, history)
			history = append(history, a)
			var calls []string
			for i, tc := range a.ToolCalls {
				calls = append(calls, tc.Name+canonical(t, tc.Arguments))
				history = append(history, providers.Message{Role: providers.RoleTool, ToolCallID: tc.ID, IsError: scriptResults[i].isError,
					Content: []providers.ContentPart{providers.TextPart(scriptResults[i].text)}})
			}
			final := step(t, p, history)
			history = append(history, final)
			if final.Text() != "Done." || len(final.ToolCalls) != 0 {
				t.Errorf("final message %+v", final)
			}
			var want []string
			for _, sc := range scriptCalls {
				want = append(want, sc.name+canonical(t, sc.args))
			}
			if !reflect.DeepEqual(calls, want) {
				t.Errorf("calls %v, want %v", calls, want)
			}
			shape := historyShape(t, history)
			wire := secondRequest()
			if firstShape == nil {
				firstShape, firstWire, firstCalls = shape, wire, calls
				wantWire := []wireTurn{
					{Role: "user", Text: "List and read."},
					{Role: "assistant", Text: "Let me look.", Calls: want},
					{Role: "results", Results: []string{"a.txt\nb.txt", "error: <system>ERROR: missing.txt does not exist</system>"}},
				}
				if !reflect.DeepEqual(wire, wantWire) {
					t.Errorf("second request %+v, want %+v", wire, wantWire)
				}
				return
			}
			if !reflect.DeepEqual(calls, firstCalls) {
				t.Errorf("calls %v, %s had %v", calls, crossCases[0].name, firstCalls)
			}
			if !reflect.DeepEqual(shape, firstShape) {
				t.Errorf("history\n%q\n%s had\n%q", shape, crossCases[0].name, firstShape)
			}
			if !reflect.DeepEqual(wire, firstWire) {
				t.Errorf("second request\n%+v\n%s sent\n%+v", wire, crossCases[0].name, firstWire)
			}
		})
	}
}
