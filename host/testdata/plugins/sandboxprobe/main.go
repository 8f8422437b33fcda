// Command sandboxprobe is a plugin that tries what a sandbox refuses: Write
// writes a file, Dial connects to a TCP address, each itself or (child:
// true) from a child process it starts; Sandbox returns the sandbox the
// plugin learnt from its environment.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

type target struct {
	Target string `json:"target" jsonschema:"A file path (Write) or HOST:PORT (Dial)."`
	Child  bool   `json:"child,omitempty" jsonschema:"Try it from a child process."`
}

type empty struct{}

func write(path string) error { return os.WriteFile(path, []byte("probe"), 0o644) }

func dial(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

func tool(name string, do func(string) error) pluginsdk.Definition {
	return pluginsdk.NewTool[target](name, name+" a target.", func() (pluginsdk.HandlerFunc[target], error) {
		return func(ctx context.Context, p target) pluginsdk.Result {
			var err error
			if p.Child {
				exe, _ := os.Executable()
				var out []byte
				out, err = exec.CommandContext(ctx, exe, "child-"+name, p.Target).CombinedOutput()
				if err != nil {
					err = fmt.Errorf("child: %v: %s", err, out)
				}
			} else {
				err = do(p.Target)
			}
			if err != nil {
				return pluginsdk.Error(err.Error())
			}
			return pluginsdk.Ok("done")
		}, nil
	})
}

func main() {
	if len(os.Args) == 3 {
		do := map[string]func(string) error{"child-Write": write, "child-Dial": dial}[os.Args[1]]
		if do != nil {
			if err := do(os.Args[2]); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	pluginsdk.Serve(tool("Write", write), tool("Dial", dial),
		pluginsdk.NewTool[empty]("Sandbox", "The plugin's sandbox.", func() (pluginsdk.HandlerFunc[empty], error) {
			return func(context.Context, empty) pluginsdk.Result { return pluginsdk.Ok(os.Getenv(pluginsdk.SandboxEnv)) }, nil
		}))
}
