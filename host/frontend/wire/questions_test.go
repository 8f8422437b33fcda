package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
)

// TestQuestionAnswers: what AskUserQuestion gets for each answer of the
// client to a QuestionRequest, or for none.
func TestQuestionAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer string // the result or error of the client's message; "" closes the connection
		want   string
	}{
		{"answered", `"result":{"request_id":"question-1","answers":{"Which?":"B"}}`, "{map[Which?:B] false}"},
		{"dismissed", `"result":{}`, "{map[] true}"},
		{"bad answer", `"result":{"answers":"B"}`, "{map[] true}"},
		{"error reply", `"error":{"code":-32000,"message":"no UI"}`, "{map[] true}"},
		{"connection closed", "", "{map[] true}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			s := &server{cfg: Config{Logger: hclog.NewNullLogger()}, peer: newPeer(pw)}
			type out struct {
				a   approval.Answers
				err error
			}
			got := make(chan out, 1)
			go func() {
				a, err := s.askQuestions(context.Background(), approval.QuestionRequest{ToolCallID: "c1", Questions: []approval.Question{
					{Question: "Which?", Header: "Pick", Options: []approval.QuestionOption{{Label: "A", Description: "a"}, {Label: "B"}}}}})
				got <- out{a, err}
			}()
			line, err := bufio.NewReader(pr).ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var req struct {
				ID     string `json:"id"`
				Method string `json:"method"`
				Params struct {
					Type    string         `json:"type"`
					Payload map[string]any `json:"payload"`
				} `json:"params"`
			}
			if err := json.Unmarshal(line, &req); err != nil || req.Method != "request" || req.Params.Type != "QuestionRequest" ||
				req.ID != "question-1" || req.Params.Payload["tool_call_id"] != "c1" ||
				fmt.Sprint(req.Params.Payload["questions"]) != "[map[header:Pick multi_select:false options:[map[description:a label:A] map[description: label:B]] question:Which?]]" {
				t.Fatalf("request %s: %v", line, err)
			}
			go io.Copy(io.Discard, pr)
			if tt.answer == "" {
				s.peer.close()
			} else {
				var m message
				if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":"question-1",`+tt.answer+`}`), &m); err != nil {
					t.Fatal(err)
				}
				if !s.peer.deliver(m) {
					t.Fatal("not delivered")
				}
			}
			r := <-got
			if r.err != nil || fmt.Sprint(r.a) != tt.want {
				t.Fatalf("answers %+v, %v; want %s", r.a, r.err, tt.want)
			}
		})
	}
}

func TestFirstCapabilities(t *testing.T) {
	for line, want := range map[string]clientCapabilities{
		`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocol_version":"1.10","capabilities":{"supports_question":true}}}`:                           {SupportsQuestion: true},
		`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocol_version":"1.10","capabilities":{"supports_question":false}}}`:                          {},
		`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocol_version":"1.10","capabilities":{"supports_plan_mode":true}}}`:                          {SupportsPlanMode: true},
		`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocol_version":"1.10","capabilities":{"supports_question":true,"supports_plan_mode":true}}}`: {SupportsQuestion: true, SupportsPlanMode: true},
		`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"protocol_version":"1.10"}}`:                                                                     {},
		`{"jsonrpc":"2.0","id":"1","method":"initialize","params":{"capabilities":{"supports_plan_mode":"yes"}}}`:                                                   {},
		`{"jsonrpc":"2.0","id":"1","method":"prompt","params":{"user_input":"hi","capabilities":{"supports_question":true}}}`:                                       {},
		`not json`: {},
		``:         {},
	} {
		if got, _ := firstCapabilities([]byte(line)); got != want {
			t.Errorf("%s: %+v, want %+v", line, got, want)
		}
	}
}
