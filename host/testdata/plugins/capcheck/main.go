// Command capcheck is a test plugin: tools that report the capabilities they
// received, ask approval, panic, fail to construct, skip, or report progress.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

type whoamiParams struct {
	Ask bool `json:"ask,omitempty"`
}

type whoami struct {
	a   pluginsdk.Approval
	env pluginsdk.Environment
	s   pluginsdk.Session
	c   pluginsdk.Config
}

func (w whoami) Call(ctx context.Context, p whoamiParams) pluginsdk.Result {
	if p.Ask {
		d, err := w.a.Request(ctx, "inspect", "Inspect the host")
		if err != nil {
			return pluginsdk.Error(err.Error())
		}
		if !d.Approved {
			return pluginsdk.Rejected(d.Feedback)
		}
	}
	out, _ := json.Marshal(map[string]any{
		"work_dir": w.env.WorkDir(), "os": w.env.OS(), "shell": w.env.Shell().Path,
		"session_id": w.s.ID(), "state_dir": w.s.StateDir(), "config": w.c.Raw(),
		"env_secret": os.Getenv("KOSONG_TEST_SECRET"), "env_allowed": os.Getenv("KOSONG_TEST_ALLOWED"),
		"call_id": pluginsdk.ToolCallID(ctx),
	})
	return pluginsdk.Ok(string(out))
}

type empty struct{}

type sizeParams struct {
	MB int `json:"mb" minimum:"0"`
}

type linesParams struct {
	Lines int `json:"lines" minimum:"0"`
}

type spawnParams struct {
	Seconds int  `json:"seconds" minimum:"1"`
	Hang    bool `json:"hang,omitempty"`
}

// spawn starts `sleep SECONDS` in a process group of its own, tracked with
// the SDK, and returns its pid; with hang it then waits for cancellation.
func spawn(ctx context.Context, p spawnParams) pluginsdk.Result {
	cmd := exec.Command("sleep", strconv.Itoa(p.Seconds))
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return pluginsdk.Error(err.Error())
	}
	pluginsdk.TrackProcessGroup(cmd.Process.Pid)
	go cmd.Wait()
	if p.Hang {
		<-ctx.Done()
	}
	return pluginsdk.Ok(strconv.Itoa(cmd.Process.Pid))
}

// peek reads /proc/PPID/environ, maps and mem (at the start of the first
// readable mapping) and its own effective capabilities; each field is what
// was read or the error.
func peek(context.Context, empty) pluginsdk.Result {
	host := "/proc/" + strconv.Itoa(os.Getppid())
	out := map[string]string{}
	read := func(name string) string {
		b, err := os.ReadFile(host + "/" + name)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	}
	out["environ"] = read("environ")
	maps := read("maps")
	out["maps"] = maps
	if f, err := os.Open(host + "/mem"); err != nil {
		out["mem"] = "error: " + err.Error()
	} else {
		var start uint64
		if !strings.HasPrefix(maps, "error") {
			fmt.Sscanf(maps, "%x-", &start)
		}
		buf := make([]byte, 64)
		n, err := f.ReadAt(buf, int64(start))
		if err != nil {
			out["mem"] = fmt.Sprintf("error: %v (after %d bytes)", err, n)
		} else {
			out["mem"] = fmt.Sprintf("read %d bytes", n)
		}
		f.Close()
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "CapEff:") || strings.HasPrefix(l, "CapBnd:") {
			k, v, _ := strings.Cut(l, ":")
			out[k] = strings.TrimSpace(v)
		}
	}
	b, _ := json.Marshal(out)
	return pluginsdk.Ok(string(b))
}

type sleepParams struct {
	Ms int `json:"ms" minimum:"0"`
}

type stepsParams struct {
	Steps int `json:"steps" minimum:"0" jsonschema:"How many steps to report."`
	Ms    int `json:"ms,omitempty" minimum:"0" jsonschema:"Milliseconds each step takes."`
}

func main() {
	tools := []pluginsdk.Definition{
		pluginsdk.NewTool[whoamiParams]("Whoami", "Reports the capabilities it received.",
			func(a pluginsdk.Approval, env pluginsdk.Environment, s pluginsdk.Session, c pluginsdk.Config) (whoami, error) {
				return whoami{a: a, env: env, s: s, c: c}, nil
			}),
		pluginsdk.NewTool[empty]("Panic", "Panics.", func() (pluginsdk.HandlerFunc[empty], error) {
			return func(context.Context, empty) pluginsdk.Result { panic("tool exploded") }, nil
		}),
		pluginsdk.NewTool[sleepParams]("Sleep", "Sleeps until done or cancelled.", func() (pluginsdk.HandlerFunc[sleepParams], error) {
			return func(ctx context.Context, p sleepParams) pluginsdk.Result {
				select {
				case <-time.After(time.Duration(p.Ms) * time.Millisecond):
					return pluginsdk.Ok("slept")
				case <-ctx.Done():
					return pluginsdk.Error("cancelled")
				}
			}, nil
		}),
		pluginsdk.NewTool[spawnParams]("Spawn", "Starts sleep SECONDS in a tracked process group of its own; returns its pid.",
			func() (pluginsdk.HandlerFunc[spawnParams], error) { return spawn, nil }),
		pluginsdk.NewTool[empty]("Peek", "Tries to read the host's (its parent's) environment and memory through /proc; reports what it got.",
			func() (pluginsdk.HandlerFunc[empty], error) { return peek, nil }),
		pluginsdk.NewTool[empty]("Crash", "Exits the plugin process mid-call.", func() (pluginsdk.HandlerFunc[empty], error) {
			return func(context.Context, empty) pluginsdk.Result {
				// A panic outside the handler (here, in another goroutine)
				// takes the whole process down.
				go func() { panic("the disk is on fire") }()
				select {}
			}, nil
		}),
		pluginsdk.NewTool[empty]("Stuck", "Ignores cancellation forever.", func() (pluginsdk.HandlerFunc[empty], error) {
			return func(context.Context, empty) pluginsdk.Result {
				select {}
			}, nil
		}),
		pluginsdk.NewTool[sizeParams]("Flood", "Returns MB megabytes of text.", func() (pluginsdk.HandlerFunc[sizeParams], error) {
			return func(_ context.Context, p sizeParams) pluginsdk.Result {
				return pluginsdk.Ok(strings.Repeat(strings.Repeat("x", 99)+"\n", p.MB*10486))
			}, nil
		}),
		pluginsdk.NewTool[sizeParams]("FloodImage", "Returns an image of MB megabytes.", func() (pluginsdk.HandlerFunc[sizeParams], error) {
			return func(_ context.Context, p sizeParams) pluginsdk.Result {
				return pluginsdk.OkParts(pluginsdk.Part{MimeType: "image/png", Data: make([]byte, p.MB<<20)})
			}, nil
		}),
		pluginsdk.NewTool[linesParams]("Logs", "Writes LINES log lines to stderr.", func() (pluginsdk.HandlerFunc[linesParams], error) {
			return func(_ context.Context, p linesParams) pluginsdk.Result {
				line := strings.Repeat("log ", 50)
				for i := range p.Lines {
					fmt.Fprintf(os.Stderr, "%d %s\n", i, line)
				}
				return pluginsdk.Ok("logged")
			}, nil
		}),
		pluginsdk.NewTool[empty]("Linger", "Writes STATE_DIR/started-ID, waits for cancellation, then writes when it saw it to STATE_DIR/cancelled-ID.",
			func(s pluginsdk.Session) (pluginsdk.HandlerFunc[empty], error) {
				return func(ctx context.Context, _ empty) pluginsdk.Result {
					id := pluginsdk.ToolCallID(ctx)
					_ = os.WriteFile(filepath.Join(s.StateDir(), "started-"+id), nil, 0o644)
					<-ctx.Done()
					seen := time.Now().UnixNano()
					path := filepath.Join(s.StateDir(), "cancelled-"+id)
					_ = os.WriteFile(path, []byte(strconv.FormatInt(seen, 10)), 0o644)
					return pluginsdk.Error("cancelled")
				}, nil
			}),
		pluginsdk.NewTool[empty]("Skipped", "Never loads.", func() (pluginsdk.HandlerFunc[empty], error) {
			return nil, pluginsdk.Skip("nothing to do here")
		}),
		pluginsdk.NewTool[empty]("Broken", "Fails to construct.", func() (pluginsdk.HandlerFunc[empty], error) {
			return nil, errors.New("database is unreachable")
		}),
		pluginsdk.NewTool[stepsParams]("Steps", "Reports STEPS progress steps, each after MS milliseconds, logging each.",
			func(p pluginsdk.Progress) (pluginsdk.HandlerFunc[stepsParams], error) {
				return func(ctx context.Context, s stepsParams) pluginsdk.Result {
					for i := range s.Steps {
						select {
						case <-time.After(time.Duration(s.Ms) * time.Millisecond):
						case <-ctx.Done():
							return pluginsdk.Error("cancelled")
						}
						pluginsdk.Logger(ctx).Info("step", "n", i+1)
						if err := p.Report(ctx, float64(i+1), float64(s.Steps), fmt.Sprintf("step %d", i+1)); err != nil {
							return pluginsdk.Error(err.Error())
						}
					}
					return pluginsdk.Ok(fmt.Sprintf("%d steps", s.Steps))
				}, nil
			}),
	}
	if err := pluginsdk.Serve(tools...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
