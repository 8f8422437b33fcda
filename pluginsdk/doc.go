// Package pluginsdk is everything a tool author imports to ship a tool as its
// own binary for kosong-host.
//
// A plugin binary declares its tools and calls Serve from main:
//
//	type EchoParams struct {
//		Text string `json:"text" jsonschema:"description=The text to echo back."`
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
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
//
// A tool's constructor takes the host capabilities it needs as parameters
// (Approval, Environment, Session, Config, Progress), and an hclog.Logger if
// it logs; the SDK reads their types, reports them to the host, and passes
// typed clients in at load time. A constructor that returns SkipThisTool
// leaves the tool out without an error. During a call, Logger(ctx) is the
// call's logger and ToolCallID(ctx) its id.
//
// Package plugintest tests tools in plain `go test`. The wire glue lives in
// package pluginrpc, which authors never need.
package pluginsdk
