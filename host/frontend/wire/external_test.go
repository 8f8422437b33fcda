package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// TestExternalToolAnswers: what a call of an external tool gives for each
// answer of the client, or for none.
func TestExternalToolAnswers(t *testing.T) {
	tests := []struct {
		name    string
		answer  string // the client's message; "" closes the connection instead
		kind    toolset.Kind
		message string
		output  string
	}{
		{"ok", `{"jsonrpc":"2.0","id":"c1","result":{"tool_call_id":"c1","return_value":{"is_error":false,"output":"fine","message":"m"}}}`, toolset.Ok, "m", "fine"},
		{"tool error", `{"jsonrpc":"2.0","id":"c1","result":{"tool_call_id":"c1","return_value":{"is_error":true,"output":"","message":"no such key"}}}`, toolset.Failed, "no such key", ""},
		{"rejected", `{"jsonrpc":"2.0","id":"c1","result":{"tool_call_id":"c1","return_value":{"rejected":true,"feedback":"not now"}}}`, toolset.Rejected, "The tool call is rejected by the user. User feedback: not now", ""},
		{"error reply", `{"jsonrpc":"2.0","id":"c1","error":{"code":-32000,"message":"lookup service down"}}`, toolset.Failed, "lookup service down", ""},
		{"invalid payload", `{"jsonrpc":"2.0","id":"c1","result":{"tool_call_id":"c1"}}`, toolset.Failed, msgInvalidResult, ""},
		{"connection closed", "", toolset.Failed, msgClosed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			p := newPeer(pw)
			tool := &externalTool{peer: p, approvals: approval.Yolo{}, spec: toolset.Spec{Name: "Lookup"}}
			got := make(chan toolset.Result, 1)
			go func() { got <- tool.Call(context.Background(), "c1", json.RawMessage(`{}`)) }()
			line, err := bufio.NewReader(pr).ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var req message
			if err := json.Unmarshal(line, &req); err != nil || req.Method != "request" {
				t.Fatalf("request %s: %v", line, err)
			}
			go io.Copy(io.Discard, pr)
			if tt.answer == "" {
				p.close()
			} else {
				var m message
				if err := json.Unmarshal([]byte(tt.answer), &m); err != nil {
					t.Fatal(err)
				}
				if !p.deliver(m) {
					t.Fatal("not delivered")
				}
			}
			r := <-got
			if r.Kind != tt.kind || r.Message != tt.message || r.OutputText() != tt.output {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

func TestExternalToolWithoutWire(t *testing.T) {
	p := newPeer(io.Discard)
	p.close()
	tool := &externalTool{peer: p, approvals: approval.Yolo{}, spec: toolset.Spec{Name: "Lookup"}}
	if r := tool.Call(context.Background(), "c1", nil); r.Message != msgNoWire {
		t.Fatalf("result %+v", r)
	}
	if r := tool.ended(context.Background(), errors.New("boom")); r.Message != "External tool call failed: boom" {
		t.Fatalf("result %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := tool.ended(ctx, ctx.Err()); r.Message != msgTurnEnded {
		t.Fatalf("result %+v", r)
	}
}
