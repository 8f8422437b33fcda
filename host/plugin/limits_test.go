package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/providers"
)

// floodPlugin loads the flood test plugin (a plugin not built on
// pluginsdk's Serve) started with args, and returns its toolset, the load
// outcome and the session state dir.
func floodPlugin(t *testing.T, opts plugin.Options, args ...string) (*toolset.Toolset, *plugin.Loaded, string) {
	t.Helper()
	path := build(t, "host/testdata/plugins/flood")
	sp := spec(path)
	sp.Args = args
	state := t.TempDir()
	opts.SessionID, opts.WorkDir, opts.StateDir = "s1", t.TempDir(), state
	if opts.Decider == nil {
		opts.Decider = approval.Yolo{}
	}
	l := plugin.Load(context.Background(), []plugin.Spec{sp}, opts)
	t.Cleanup(l.Close)
	ts := toolset.New(nil)
	for _, st := range l.Status {
		if st.Tool != nil {
			if err := ts.Add(st.Tool); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ts, l, state
}

func callID(t *testing.T, ts *toolset.Toolset, id, name, args string) toolset.Result {
	t.Helper()
	p := ts.Handle(context.Background(), providers.ToolCall{ID: id, Name: name, Arguments: args})
	return result(t, p, name)
}

// TestFloodResultIsBounded: whatever field of its result a plugin floods,
// what the host keeps for the model and the user is within the limits; cut
// output is saved in full where the SDK saves it, and a result over the
// message limit is an error naming the plugin and the limit.
func TestFloodResultIsBounded(t *testing.T) {
	ts, l, state := floodPlugin(t, plugin.Options{})
	if len(l.Failures) > 0 {
		t.Fatalf("load: %v", l.Failures)
	}
	outputs := filepath.Join(state, "plugins", "flood", limits.OutputsDir)
	big := 15 << 20
	tests := []struct {
		field string
		bytes int
		check func(t *testing.T, r toolset.Result)
	}{
		{"output", 20 << 20, func(t *testing.T, r toolset.Result) {
			if want := "plugin flood: the message exceeds the size limit of 16 MiB for one message between host and plugin: grpc: received message larger than max"; !r.IsError() || !strings.Contains(r.Message, want) {
				t.Fatalf("a 20 MB result: %q, want %q", r.Message, want)
			}
		}},
		{"output", big, func(t *testing.T, r toolset.Result) {
			saved := filepath.Join(outputs, "c-output.txt")
			if !strings.HasSuffix(r.OutputText(), limits.TruncatedMarker) || !strings.Contains(r.Message, "saved in "+saved) {
				t.Fatalf("output not cut, or the full text not saved: %q", r.Message)
			}
			if fi, err := os.Stat(saved); err != nil || fi.Size() != int64(big) {
				t.Fatalf("full output: %v %v", fi, err)
			}
		}},
		{"lines", big, func(t *testing.T, r toolset.Result) {
			if !strings.HasSuffix(r.OutputText(), limits.TruncatedMarker) || !strings.Contains(r.Message, "c-lines.txt") {
				t.Fatalf("lines not cut: %q", r.Message)
			}
		}},
		{"message", big, func(t *testing.T, r toolset.Result) {
			if !strings.HasSuffix(r.Message, limits.TruncatedMarker) {
				t.Fatalf("message not cut: %d bytes", len(r.Message))
			}
		}},
		{"brief", 1 << 20, func(t *testing.T, r toolset.Result) {
			if utf8.RuneCountInString(r.Brief) != limits.BriefChars {
				t.Fatalf("brief of %d characters", utf8.RuneCountInString(r.Brief))
			}
		}},
		{"feedback", big, func(t *testing.T, r toolset.Result) {
			if r.Kind != toolset.Rejected || !strings.HasSuffix(r.Feedback, limits.TruncatedMarker) {
				t.Fatalf("feedback not cut: %v, %d bytes", r.Kind, len(r.Feedback))
			}
		}},
		{"image", big + 1<<19, func(t *testing.T, r toolset.Result) {
			if want := "[image of 15.5 MiB left out: plugin flood sent more than the 15 MiB an image may have]"; r.OutputText() != want {
				t.Fatalf("image: %q, want %q", r.OutputText(), want)
			}
		}},
		{"url", big + 1<<19, func(t *testing.T, r toolset.Result) {
			if len(r.Output) != 1 || r.Output[0].Type != providers.PartText || !strings.Contains(r.OutputText(), "left out") {
				t.Fatalf("image URL kept: %d parts", len(r.Output))
			}
		}},
		{"display", 10 << 20, func(t *testing.T, r toolset.Result) {
			var note string
			if len(r.Display) != 1 || r.Display[0].Kind != "brief" || json.Unmarshal(r.Display[0].Data, &note) != nil ||
				note != "[10.0 MiB of display left out: plugin flood sent more than the 4 MiB a result may show]" {
				t.Fatalf("display: %d blocks, %.200q", len(r.Display), note)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s", tt.field, limits.Size(tt.bytes)), func(t *testing.T) {
			r := callID(t, ts, "c-"+tt.field, "Result", fmt.Sprintf(`{"field":%q,"bytes":%d}`, tt.field, tt.bytes))
			tt.check(t, r)
			// What reaches the history and every later model request.
			msg := r.ToolMessage()
			size := len(msg.Text())
			for _, d := range r.Display {
				size += len(d.Data)
			}
			if size > 4*(limits.ResultChars+limits.ResultChars+limits.BriefChars)+limits.DisplayBytes+1000 {
				t.Fatalf("%d bytes reach the history", size)
			}
		})
	}
}

// TestFloodDeclarationsAreRefused: a tool whose schema or description is over
// its limit is refused at load, naming the plugin, the tool and the limit;
// the plugin's other tools load.
func TestFloodDeclarationsAreRefused(t *testing.T) {
	tests := []struct{ mode, want string }{
		{"schema", "flood:Schema (plugin flood: tool Schema declares a parameters schema of 12.0 MiB, over the limit of 64 KiB for a tool's schema)"},
		{"description", "flood:Description (plugin flood: tool Description declares a description of 5 MiB, over the limit of 32 KiB for a tool's description)"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			ts, l, _ := floodPlugin(t, plugin.Options{}, tt.mode)
			if len(l.Failures) != 1 || l.Failures[0] != tt.want {
				t.Fatalf("failures %q, want %q", l.Failures, tt.want)
			}
			if got := strings.Join(ts.Names(), ","); got != "Result,Progress,Approve" {
				t.Fatalf("tools %s", got)
			}
			// What every model request carries.
			size := 0
			for _, d := range ts.Tools() {
				size += len(d.Description) + len(d.Parameters)
			}
			if size > 3*(limits.SchemaBytes+limits.DescriptionBytes) {
				t.Fatalf("the tools of a model request take %d bytes", size)
			}
		})
	}
}

// TestFloodDescribeOverTheMessageLimit: a Describe answer over the message
// limit fails the plugin's start, naming the plugin and the limit.
func TestFloodDescribeOverTheMessageLimit(t *testing.T) {
	ts, l, _ := floodPlugin(t, plugin.Options{}, "both")
	if len(l.Failures) != 1 || !strings.HasPrefix(l.Failures[0], "plugin flood: describe: ") ||
		!strings.Contains(l.Failures[0], "received message larger than max (") ||
		!strings.Contains(l.Failures[0], fmt.Sprintf(" vs. %d)", limits.MessageBytes)) ||
		len(ts.Names()) != 0 {
		t.Fatalf("failures %q, tools %v", l.Failures, ts.Names())
	}
}

// TestFloodLoadReasonIsCut: the reason a tool failed to load is one line of
// an error, cut to limits.BriefChars.
func TestFloodLoadReasonIsCut(t *testing.T) {
	_, l, _ := floodPlugin(t, plugin.Options{}, "reason")
	want := "flood:Approve (" + strings.Repeat("r", limits.BriefChars-len(limits.TruncatedMarker)) + limits.TruncatedMarker + ")"
	if len(l.Failures) != 1 || l.Failures[0] != want {
		t.Fatalf("failures of %d bytes", len(strings.Join(l.Failures, "")))
	}
}

// TestFloodProgressIsBounded: 10,000 progress reports of 10 KB reach the
// user at most once an interval, each message cut, the last one always.
func TestFloodProgressIsBounded(t *testing.T) {
	var mu sync.Mutex
	var got []toolset.Progress
	ts, _, _ := floodPlugin(t, plugin.Options{OnProgress: func(p toolset.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	}})
	start := time.Now()
	r := callID(t, ts, "c-progress", "Progress", `{"count":10000,"bytes":10000}`)
	elapsed := time.Since(start)
	if r.IsError() || r.OutputText() != "sent 10000, 0 failed " {
		t.Fatalf("progress call: %q %q", r.OutputText(), r.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if max := int(elapsed/limits.ProgressInterval) + 2; len(got) > max || len(got) < 2 {
		t.Fatalf("%d reports passed on in %v, want 2 to %d", len(got), elapsed, max)
	}
	for _, p := range got {
		if n := utf8.RuneCountInString(p.Message); n > limits.ProgressMessageChars {
			t.Fatalf("a progress message of %d characters", n)
		}
	}
	if last := got[len(got)-1]; last.Progress != 10000 || last.Total != 10000 {
		t.Fatalf("last report %v/%v", last.Progress, last.Total)
	}
}

// TestLargeApproval: an approval request over gRPC's 4 MB default reaches
// the user through the capability server; over the approval limit its
// details are replaced by a note saying so, and over the message limit the
// plugin gets an error naming the limit.
func TestLargeApproval(t *testing.T) {
	var mu sync.Mutex
	var seen approval.Request
	decider := approval.DeciderFunc(func(_ context.Context, r approval.Request) (approval.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = r
		return approval.Decision{Approved: true}, nil
	})
	ts, _, _ := floodPlugin(t, plugin.Options{Decider: decider})
	tests := []struct {
		bytes   int
		display string
		err     string
	}{
		{1 << 20, "diff", ""},
		{3 << 20, "brief", ""},
		{9 << 20, "", "grpc: received message larger than max"},
	}
	for _, tt := range tests {
		t.Run(limits.Size(2*tt.bytes), func(t *testing.T) {
			mu.Lock()
			seen = approval.Request{}
			mu.Unlock()
			r := callID(t, ts, "c-approve", "Approve", fmt.Sprintf(`{"bytes":%d}`, tt.bytes))
			if tt.err != "" {
				if !r.IsError() || !strings.Contains(r.Message, tt.err) || !strings.Contains(r.Message, fmt.Sprint(limits.MessageBytes)) {
					t.Fatalf("got %q, want an error with %q", r.Message, tt.err)
				}
				return
			}
			if r.IsError() || r.OutputText() != "approved=true" {
				t.Fatalf("approval of a %s request: %q %q", limits.Size(2*tt.bytes), r.OutputText(), r.Message)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen.Display) != 1 || seen.Display[0].Kind != tt.display {
				t.Fatalf("the user saw %d blocks: %+v", len(seen.Display), seen.Display)
			}
		})
	}
}
