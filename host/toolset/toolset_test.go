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

// todoSchema has nested properties, a $ref, a oneOf and no defaults.
const todoSchema = `{"type":"object","$defs":{"person":{"type":"object","properties":{"name":{"type":"string","minLength":1}}}},"properties":{
	"todos":{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"status":{"enum":["pending","done"]}},"required":["title"]}},
	"options":{"type":"object","properties":{"depth":{"type":"integer"}}},
	"owner":{"$ref":"#/$defs/person"},
	"edit":{"oneOf":[{"type":"object"},{"type":"array"}]}}}`

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
		fakeTool{spec: Spec{Name: "Todo", Parameters: json.RawMessage(todoSchema)}, call: echoArgs},
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
		// A plugin being started with the clock paused outlives the
		// timeout; once the clock runs again, the call times out as usual.
		fakeTool{spec: Spec{Name: "Starting", Parameters: json.RawMessage(`{"type":"object"}`), Timeout: 50 * time.Millisecond},
			call: func(ctx context.Context, _ string, args json.RawMessage) Result {
				resume := PauseTimeout(ctx)
				started := time.After(500 * time.Millisecond) // the start: 10 timeouts long
				select {
				case <-started:
				case <-ctx.Done():
					resume()
					return Result{Kind: Failed, Message: "cut off while starting"}
				}
				KeepAlive(ctx) // progress while paused changes nothing
				resume()
				if string(args) == `{"hang":true}` {
					<-ctx.Done()
					return Result{Kind: Failed, Message: "interrupted"}
				}
				return Result{Output: []providers.ContentPart{providers.TextPart("started")}}
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
		{"a start does not count against the timeout", "Starting", `{}`, Ok, "", "", "started"},
		{"the clock runs again after the start", "Starting", `{"hang":true}`, Failed, "Tool Starting timed out after 50ms", "Timed out", ""},
		{"failure long before the deadline", "FailsFast", `{}`, Failed, "Error running tool: no such table", "Tool runtime error", ""},
		{"not found", "Nope", `{}`, Failed, "Tool `Nope` not found", "Tool `Nope` not found", ""},
		{"not JSON", "Shell", `{"command":`, Failed, "Error parsing JSON arguments: unexpected EOF", "Invalid arguments", ""},
		{"wrong type", "Shell", `{"command":1}`, Failed, `Error validating JSON arguments: parameter "command": type: 1 has type "integer", want "string"`, "Invalid arguments", ""},
		{"above maximum", "Shell", `{"command":"x","timeout":301}`, Failed, `Error validating JSON arguments: parameter "timeout": maximum: 301 is greater than 300`, "Invalid arguments", ""},
		{"missing property", "Shell", `{}`, Failed, `Error validating JSON arguments: missing parameter "command"`, "Invalid arguments", ""},
		{"two unknown properties", "Shell", `{"command":"x","cwd":"/","env":{}}`, Failed, `Error validating JSON arguments: unknown parameters "cwd", "env"`, "Invalid arguments", ""},
		{"not an object", "Shell", `["ls"]`, Failed, `Error validating JSON arguments: type: [ls] has type "array", want "object"`, "Invalid arguments", ""},
		{"more than one value", "Shell", `{"command":"ls"} {}`, Failed, "Error parsing JSON arguments: more data after the arguments", "Invalid arguments", ""},
		{"nested enum", "Todo", `{"todos":[{"title":"a"},{"title":"b","status":"later"}]}`, Failed,
			`Error validating JSON arguments: parameter "todos[].status": enum: later does not equal any of: [pending done]`, "Invalid arguments", ""},
		{"nested missing property", "Todo", `{"todos":[{"status":"done"}]}`, Failed, `Error validating JSON arguments: missing parameter "todos[].title"`, "Invalid arguments", ""},
		{"nested object", "Todo", `{"options":{"depth":0.5}}`, Failed, `Error validating JSON arguments: parameter "options.depth": type: 0.5 has type "number", want "integer"`, "Invalid arguments", ""},
		{"through a $ref", "Todo", `{"owner":{"name":""}}`, Failed,
			`Error validating JSON arguments: parameter "owner.name": minLength: "" contains 0 Unicode code points, fewer than 1`, "Invalid arguments", ""},
		{"one of several forms", "Todo", `{"edit":true}`, Failed,
			`Error validating JSON arguments: parameter "edit": oneOf: did not validate against any of the allowed schemas`, "Invalid arguments", ""},
		{"long value cut", "Shell", `{"command":"x","timeout":"` + strings.Repeat("9", 400) + `"}`, Failed,
			`Error validating JSON arguments: parameter "timeout": type: ` + strings.Repeat("9", 300-len(`parameter "timeout": type: `)) + "…", "Invalid arguments", ""},
		{"unknown property", "Shell", `{"command":"x","cwd":"/"}`, Failed, `Error validating JSON arguments: unknown parameter "cwd"`, "Invalid arguments", ""},
	}
	// Call runs the call in the caller's goroutine, with Handle's outcome.
	ways := []struct {
		name string
		run  func(providers.ToolCall) Result
	}{
		{"Handle", func(c providers.ToolCall) Result { return ts.Handle(context.Background(), c).Result() }},
		{"Call", func(c providers.ToolCall) Result { return ts.Call(context.Background(), c) }},
	}
	for _, tt := range tests {
		for _, way := range ways {
			t.Run(way.name+"/"+tt.name, func(t *testing.T) {
				r := way.run(providers.ToolCall{ID: "id-1", Name: tt.tool, Arguments: tt.args})
				if r.Kind != tt.kind || r.Message != tt.message || (tt.brief != "" && r.Brief != tt.brief) || r.OutputText() != tt.output || r.ToolCallID != "id-1" {
					t.Fatalf("got %+v", r)
				}
				if ts.Active("id-1") {
					t.Fatal("the call is still active once its result is in")
				}
			})
		}
	}
}

func TestHandleAppliesDefaults(t *testing.T) {
	const withDefaults = `{"type":"object","properties":{
		"mode":{"type":"string","default":"overwrite"},
		"path":{"type":"string","default":"ignored: required"},
		"options":{"type":"object","properties":{"depth":{"type":"integer","default":2},
			"sort":{"type":"object","properties":{"by":{"type":"string","default":"name"}}}}},
		"limit":{"type":"integer"}},"required":["path"]}`
	tests := []struct {
		name, schema, args, want string
	}{
		{"top level and nested", withDefaults, `{"path":"a"}`, `{"mode":"overwrite","options":{"depth":2,"sort":{"by":"name"}},"path":"a"}`},
		{"given values stay", withDefaults, `{"path":"a","mode":"append","options":{"sort":{"by":"size"}}}`,
			`{"mode":"append","options":{"depth":2,"sort":{"by":"size"}},"path":"a"}`},
		{"numbers as written", withDefaults, `{"path":"a","limit":12345678901234567890,"options":{"depth":1.0}}`,
			`{"limit":12345678901234567890,"mode":"overwrite","options":{"depth":1.0,"sort":{"by":"name"}},"path":"a"}`},
		{"no defaults: arguments unchanged", shellSchema, `{ "command" : "ls" }`, `{ "command" : "ls" }`},
		{"draft-04 schema", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer","default":3}}}`, `{}`, `{"n":3}`},
		{"draft-07 schema without #", `{"$schema":"http://json-schema.org/draft-07/schema","type":"object","properties":{"n":{"type":"integer","default":3}}}`, `{}`, `{"n":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newSet(t, fakeTool{spec: Spec{Name: "T", Parameters: json.RawMessage(tt.schema)}, call: echoArgs})
			r := ts.Handle(context.Background(), providers.ToolCall{ID: "1", Name: "T", Arguments: tt.args}).Result()
			if r.Kind != Ok || r.OutputText() != tt.want {
				t.Fatalf("got %+v, want output %s", r, tt.want)
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
