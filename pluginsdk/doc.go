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
//		pluginsdk.Serve(pluginsdk.NewTool[EchoParams]("Echo", "Echo the text back.",
//			func() (Echo, error) { return Echo{}, nil }))
//	}
//
// A tool's constructor takes the host capabilities it needs as parameters
// (Approval, Environment, Session, Config); the SDK reads their types, reports
// them to the host, and passes typed clients in at load time. A constructor
// that returns SkipThisTool leaves the tool out without an error.
package pluginsdk
