package toolset

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

type fakeTool struct {
	spec Spec
	call func(ctx context.Context, id string, args json.RawMessage) Result
}

func (f fakeTool) Spec() Spec { return f.spec }
func (f fakeTool) Call(ctx context.Context, id string, args json.RawMessage) Result {
	return f.call(ctx, id, args)
}

const shellSchema = `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer","minimum":1,"maximum":300}},"required":["command"],"additionalProperties":false}`

func newSet(t *testing.T, tools ...fakeTool) *Toolset {
	t.Helper()
	ts := New(nil)
	for _, tool := range tools {
		if err := ts.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

func echoArgs(_ context.Context, _ string, args json.RawMessage) Result {
	return Result{Output: []providers.ContentPart{providers.TextPart(string(args))}}
}

func TestHandle(t *testing.T) {
	ts := newSet(t,
		fakeTool{spec: Spec{Name: "Shell", Parameters: json.RawMessage(shellSchema), Source: "plugin shell"}, call: echoArgs},
		fakeTool{spec: Spec{Name: "Boom", Parameters: json.RawMessage(`{"type":"object"}`)}, call: func(context.Context, string, json.RawMessage) Result {
			panic("host-side adapter bug")
		}},
		fakeTool{spec: Spec{Name: "Slow", Parameters: json.RawMessage(`{"type":"object"}`), Timeout: 50 * time.Millisecond},
			call: func(ctx context.Context, _ string, _ json.RawMessage) Result {
				<-ctx.Done()
				return Result{Kind: Failed, Message: "interrupted", Output: []providers.ContentPart{providers.TextPart("partial")}}
			}},
		// Progress restarts the timeout clock: the call outlives its timeout.
		fakeTool{spec: Spec{Name: "KeepsAlive", Parameters: json.RawMessage(`{"type":"object"}`), Timeout: 500 * time.Millisecond},
			call: func(ctx context.Context, _ string, _ json.RawMessage) Result {
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for range 20 {
					select {
					case <-tick.C:
						KeepAlive(ctx)
					case <-ctx.Done():
						return Result{Kind: Failed, Message: "cut off"}
					}
				}
				return Result{Output: []providers.ContentPart{providers.TextPart("alive")}}
			}},
		fakeTool{spec: Spec{Name: "FailsFast", Parameters: json.RawMessage(`{"type":"object"}`), Timeout: time.Minute},
			call: func(context.Context, string, json.RawMessage) Result {
				return Result{Kind: Failed, Message: "Error running tool: no such table", Brief: "Tool runtime error"}
			}},
	)
	tests := []struct {
		name, tool, args string
		kind             Kind
		message, brief   string
		output           string
	}{
		{"valid", "Shell", `{"command":"ls"}`, Ok, "", "", `{"command":"ls"}`},
		{"empty arguments are {}", "Boom", ``, Failed, "Error running tool: host-side adapter bug", "Tool runtime error", ""},
		{"null arguments are {}", "Slow", `null`, Failed, "Tool Slow timed out after 50ms", "Timed out", "partial"},
		{"progress restarts the timeout", "KeepsAlive", `{}`, Ok, "", "", "alive"},
		{"failure long before the deadline", "FailsFast", `{}`, Failed, "Error running tool: no such table", "Tool runtime error", ""},
		{"not found", "Nope", `{}`, Failed, "Tool `Nope` not found", "Tool `Nope` not found", ""},
		{"not JSON", "Shell", `{"command":`, Failed, "Error parsing JSON arguments: unexpected EOF", "Invalid arguments", ""},
		{"wrong type", "Shell", `{"command":1}`, Failed, "Error validating JSON arguments: at /command: got number, want string", "Invalid arguments", ""},
		{"above maximum", "Shell", `{"command":"x","timeout":301}`, Failed, "Error validating JSON arguments: at /timeout: maximum: got 301, want 300", "Invalid arguments", ""},
		{"missing property", "Shell", `{}`, Failed, "Error validating JSON arguments: missing property 'command'", "Invalid arguments", ""},
		{"unknown property", "Shell", `{"command":"x","cwd":"/"}`, Failed, "Error validating JSON arguments: additional properties 'cwd' not allowed", "Invalid arguments", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Handle(context.Background(), providers.ToolCall{ID: "id-1", Name: tt.tool, Arguments: tt.args}).Result()
			if r.Kind != tt.kind || r.Message != tt.message || (tt.brief != "" && r.Brief != tt.brief) || r.OutputText() != tt.output || r.ToolCallID != "id-1" {
				t.Fatalf("got %+v", r)
			}
		})
	}
}

func TestHandleNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	started := make(chan string, 1)
	ts := newSet(t, fakeTool{spec: Spec{Name: "Wait", Parameters: json.RawMessage(`{"type":"object"}`)},
		call: func(_ context.Context, id string, _ json.RawMessage) Result {
			started <- id
			<-release
			return Result{}
		}})
	p := ts.Handle(context.Background(), providers.ToolCall{ID: "w1", Name: "Wait"})
	if id := <-started; id != "w1" || !ts.Active("w1") {
		t.Fatalf("started %q, active %v", id, ts.Active("w1"))
	}
	select {
	case <-p.Done():
		t.Fatal("done before release")
	default:
	}
	close(release)
	<-p.Done()
	if ts.Active("w1") {
		t.Fatal("still active after the result")
	}
}

func TestAddDuplicate(t *testing.T) {
	ts := newSet(t, fakeTool{spec: Spec{Name: "Echo", Parameters: json.RawMessage(`{}`), Source: "plugin echo"}})
	err := ts.Add(fakeTool{spec: Spec{Name: "Echo", Parameters: json.RawMessage(`{}`), Source: "plugin echo2"}})
	if err == nil || err.Error() != "duplicate tool name Echo: provided by plugin echo and by plugin echo2" {
		t.Fatalf("err = %v", err)
	}
	if err := ts.Add(fakeTool{spec: Spec{Name: "Bad", Parameters: json.RawMessage(`{"type": 5}`)}}); err == nil || !strings.Contains(err.Error(), "tool Bad: parameters schema") {
		t.Fatalf("bad schema err = %v", err)
	}
	if got := ts.Tools(); len(got) != 1 || got[0].Name != "Echo" {
		t.Fatalf("tools = %+v", got)
	}
}

func TestReplace(t *testing.T) {
	tool := func(name, source string) fakeTool {
		return fakeTool{spec: Spec{Name: name, Parameters: json.RawMessage(`{"type":"object"}`), Source: source}, call: echoArgs}
	}
	ts := newSet(t, tool("Shell", "plugin shell"), tool("s__a", "mcp server s"), tool("s__b", "mcp server s"), tool("Think", "plugin think"))
	var seen []string
	ts.Watch(func() { seen = append(seen, strings.Join(ts.Names(), " ")) })
	errs := ts.Replace([]string{"s__a", "s__b"},
		tool("s__b", "mcp server s"), tool("s__c", "mcp server s"), tool("Shell", "mcp server s"),
		fakeTool{spec: Spec{Name: "s__bad", Parameters: json.RawMessage(`{"type": 5}`)}})
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "tool s__bad: parameters schema") ||
		errs[1].Error() != "duplicate tool name Shell: provided by plugin shell and by mcp server s" {
		t.Fatalf("errors %v", errs)
	}
	var names []string
	for _, d := range ts.Tools() {
		names = append(names, d.Name)
	}
	if strings.Join(names, " ") != "Shell Think s__b s__c" || strings.Join(ts.Names(), " ") != "Shell Think s__b s__c" {
		t.Fatalf("tools %v, names %v", names, ts.Names())
	}
	if len(seen) != 2 || seen[0] != "Shell s__a s__b Think" || seen[1] != "Shell Think s__b s__c" {
		t.Fatalf("the watcher saw %q", seen)
	}
	if _, ok := ts.Find("s__a"); ok {
		t.Fatal("s__a is still found")
	}
	if r := ts.Handle(context.Background(), providers.ToolCall{ID: "1", Name: "s__a", Arguments: `{}`}).Result(); r.Message != "Tool `s__a` not found" {
		t.Fatalf("removed tool: %+v", r)
	}
	if r := ts.Handle(context.Background(), providers.ToolCall{ID: "2", Name: "s__c", Arguments: `{"x":1}`}).Result(); r.OutputText() != `{"x":1}` {
		t.Fatalf("added tool: %+v", r)
	}
}

func TestToolMessage(t *testing.T) {
	text := func(s string) []providers.ContentPart { return []providers.ContentPart{providers.TextPart(s)} }
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"output only", Result{Output: text("hi")}, "hi"},
		{"message and output", Result{Message: "Output truncated.", Output: text("hi")}, "<system>Output truncated.</system>\nhi"},
		{"empty", Result{}, "<system>Tool output is empty.</system>"},
		{"error", Result{Kind: Failed, Message: "Command failed with exit code 2", Output: text("ls: x: No such file")},
			"<system>ERROR: Command failed with exit code 2</system>\nls: x: No such file"},
		{"runtime error", RuntimeError(errString("plugin died")),
			"<system>ERROR: Error running tool: plugin died This is an unexpected error and the tool is probably not working.</system>"},
		{"rejected", RejectedResult(""), "<system>ERROR: " + rejectedMessage + "</system>"},
		{"rejected with feedback", RejectedResult("use git mv"), "<system>ERROR: The tool call is rejected by the user. User feedback: use git mv</system>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.ToolCallID = "c9"
			m := tt.r.ToolMessage()
			if m.Role != providers.RoleTool || m.ToolCallID != "c9" || m.Text() != tt.want {
				t.Fatalf("got %q", m.Text())
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
