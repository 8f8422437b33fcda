// Package pluginsdk is everything a tool author imports to ship a tool as its
// own binary for kosong-host.
//
// A plugin binary declares its tools and calls Serve from main:
//
//	type EchoParams struct {
//		Text string `json:"text" jsonschema:"The text to echo back."`
//	}
//
//	type Echo struct{}
//
//	func (Echo) Call(ctx context.Context, p EchoParams) pluginsdk.Result {
//		return pluginsdk.Ok(p.Text)
//	}
//
//	func main() {
//		err := pluginsdk.Serve(pluginsdk.NewTool[EchoParams]("Echo", "Echo the text back.",
//			func() (Echo, error) { return Echo{}, nil }))
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err) // run by hand rather than by kosong-host
//			os.Exit(1)
//		}
//	}
//
// Started by kosong-host, a binary whose tools are declared wrongly (see
// Definition.Err) does not return from Serve: Serve writes the reason on
// stderr, in a line the host quotes ("PATH is a kosong plugin that failed
// to declare its tools: REASON"), and exits with status 1.
//
// # Parameters
//
// A typed tool's parameters struct becomes its JSON Schema
// (google/jsonschema-go, as in the MCP go-sdk). The json tag names each
// property; a field without omitempty or omitzero is required. The whole
// jsonschema tag is the property's description, commas included; it must
// not start with WORD=. Keywords have tags of their own, named as the
// keyword:
//
//	type ShellParams struct {
//		Command string `json:"command" minLength:"1" jsonschema:"The command to run, as typed at a prompt."`
//		Timeout int    `json:"timeout,omitempty" default:"60" minimum:"1" maximum:"300" jsonschema:"Timeout in seconds."`
//		Mode    string `json:"mode,omitempty" default:"run" enum:"run,dry-run"`
//	}
//
// The keyword tags are default, enum, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minLength, maxLength, minItems, maxItems, pattern and
// format. A default or enum value is the text itself for a string property
// and JSON for any other (default:"true", default:"[1,2]"); enum separates
// its values with commas and, on a slice, constrains the elements. Nested
// structs (fields, pointers, elements of slices and maps) read the same tags.
//
// Before the handler runs, absent properties get their defaults, in nested
// objects too: an absent object (a pointer one too) whose properties have
// defaults is created with them. A default belongs on an optional property
// of an object, not on a required one or inside the elements of a slice or
// map, where it would never apply; a default the schema itself rejects, a
// tag that cannot be read, and the description tags of other generators
// (jsonschema_description, jsonschema:"description=...") fail the
// declaration. The host validates the arguments against the schema (and
// fills in the same defaults) before the call reaches the plugin.
//
// A tool whose parameters are only known at run time declares its schema by
// hand with NewRawTool.
//
// # Capabilities
//
// A tool's constructor takes the host capabilities it needs as parameters,
// and an hclog.Logger if it logs; the SDK reads their types, reports them
// to the host, and passes typed clients in at load time. There are seven:
//
//   - Approval: ask the user to approve an action of the running call.
//   - Environment: the host's OS, the user's shell, the work dir, the clock.
//   - Session: the session's id, work dir and this plugin's state dir.
//   - Config: the tool's config block from agent.yaml.
//   - Progress: report how far the running call has got (it also restarts
//     the call's timeout).
//   - UserInput: ask the user multiple-choice questions; offered only where
//     someone can answer, a tool needing it is skipped elsewhere.
//   - Model: the session's model and what it can do.
//   - Editor: the user's editor's files (unsaved buffers, undoable
//     edits), where the front end's client lends them; a tool that takes
//     it gets nil elsewhere and works on the disk.
//   - Terminal: the user's editor's terminal, to run commands where the
//     user watches them; nil where the client lends none.
//
// A constructor that returns SkipThisTool (or Skip) leaves the tool out
// without an error. During a call, Logger(ctx) is the call's logger and
// ToolCallID(ctx) its id.
//
// # Cancellation
//
// A call's ctx ends when the user interrupts it or it times out (the
// timeout restarts with each progress report). Return promptly then: a
// handler still running past the grace period after its ctx ended (5
// seconds by default; the host passes its own in KOSONG_PLUGIN_CANCEL_GRACE)
// takes its plugin process down, with the process groups it tracks
// (TrackProcessGroup) and every other call in flight, so that the host
// restarts a plugin known to be sane for the next call. A handler that
// panics fails only its own call.
//
// Package plugintest tests tools in plain `go test`. The wire glue lives in
// package pluginrpc, which authors never need.
package pluginsdk
