package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpserver"
)

// stdioServer serves the test tools over mcpserver.StdioTransport on two
// pipes and returns the client's ends: what it writes to the server, and
// the server's output, line by line. The server's Run error arrives on
// done.
func stdioServer(t *testing.T, maxLine int) (io.WriteCloser, *bufio.Reader, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcpserver.New(tools(t, approval.Yolo{}), nil, mcpserver.Options{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, &mcpserver.StdioTransport{In: inR, Out: outW, MaxLineLength: maxLine})
	}()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
	})
	return inW, bufio.NewReader(outR), done
}

// TestStdioTransportServesAClient: the go-sdk's own client lists and
// calls tools through the transport, as over mcp.StdioTransport.
func TestStdioTransportServesAClient(t *testing.T) {
	inW, out, _ := stdioServer(t, 0)
	ct := &mcp.IOTransport{Reader: io.NopCloser(out), Writer: inW}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tl, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tl.Tools) == 0 {
		t.Fatalf("tools/list: %v, %d tools", err, len(tl.Tools))
	}
	for i := range 3 {
		res := callTool(t, cs, "Echo", map[string]any{"text": strings.Repeat("é", 1+i*40000)})
		if res.IsError || res.Content[0].(*mcp.TextContent).Text != strings.Repeat("é", 1+i*40000) {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	if res := callTool(t, cs, "Fail", map[string]any{}); !res.IsError {
		t.Fatalf("Fail: %+v", res)
	}
}

const initLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// TestStdioTransportWire: what a client writes by hand. A batch gets one
// array with the responses to its calls; blank lines are skipped; a line
// that is not a JSON-RPC message ends the connection with an error that
// says what was wrong with it.
func TestStdioTransportWire(t *testing.T) {
	call := func(id int, text string) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"Echo","arguments":{"text":"` + text + `"}}}`
	}
	t.Run("batch", func(t *testing.T) {
		inW, out, _ := stdioServer(t, 0)
		go func() {
			_, _ = io.WriteString(inW, initLines+"\n  \n["+call(2, "a")+`,{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},`+call(3, "b")+"]\n")
		}()
		if line := readLine(t, out); !strings.Contains(line, `"id":1`) {
			t.Fatalf("initialize: %s", line)
		}
		line := readLine(t, out)
		var batch []struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &batch); err != nil || len(batch) != 2 {
			t.Fatalf("batch response %s: %v", line, err)
		}
		if batch[0].ID != 2 || batch[0].Result.Content[0].Text != "a" || batch[1].ID != 3 || batch[1].Result.Content[0].Text != "b" {
			t.Fatalf("batch response: %s", line)
		}
	})
	for _, tc := range []struct {
		name, line string
		maxLine    int
		want       string
	}{
		{"not JSON", "{not json\n", 0, "not valid JSON"},
		{"wrong version", `{"jsonrpc":"1.0","id":2,"method":"ping"}` + "\n", 0, `version tag "1.0"`},
		{"neither method nor id", `{"jsonrpc":"2.0","result":{}}` + "\n", 0, "neither a method nor an id"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}` + "\n", 0, "an id of type"},
		{"empty batch", "[]\n", 0, "an empty JSON-RPC batch"},
		{"batch not JSON", "[1,\n", 0, "batch that is not valid JSON"},
		{"duplicate ids in a batch", "[" + call(2, "a") + "," + call(2, "b") + "]\n", 0, "the id 2 twice"},
		{"too long", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("x", 300<<10) + `"}}` + "\n", 1 << 10, mcpserver.ErrLineTooLong.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inW, out, done := stdioServer(t, tc.maxLine)
			go func() { _, _ = io.WriteString(inW, initLines+tc.line) }()
			go func() { _, _ = io.Copy(io.Discard, out) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Run: %v, want an error with %q", err, tc.want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the connection did not end")
			}
		})
	}
	t.Run("end of input", func(t *testing.T) {
		inW, out, done := stdioServer(t, 0)
		go func() { _, _ = io.Copy(io.Discard, out) }()
		go func() {
			_, _ = io.WriteString(inW, initLines+`{"jsonrpc":"2.0","id":2,"method":"ping"}`) // no newline at the end
			_ = inW.Close()
		}()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the connection did not end at the end of its input")
		}
	})
}

// TestStdioTransportCloseEndsRead: a cancelled server returns although
// its input is still open and silent.
func TestStdioTransportCloseEndsRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	srv := mcpserver.New(tools(t, approval.Yolo{}), nil, mcpserver.Options{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcpserver.StdioTransport{In: inR, Out: io.Discard}) }()
	go func() { _, _ = io.WriteString(inW, initLines) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read the server's output: %v (%q)", err, line)
	}
	return line
}
