package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestTemporalQuestions: a tool's question in a session of serve --engine
// temporal waits in the workflow. The server's clients see it as a
// question_request and answer it through the API; the next turn's is
// listed and answered by `kosong-host questions`, which the server logs
// as answered elsewhere; each turn goes on with its answer; a second
// answer, a missing or unknown answer and bad arguments are one-line
// errors.
func TestTemporalQuestions(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"questions": []map[string]any{{
		"question": "Which colour?", "header": "Colour",
		"options": []map[string]any{{"label": "Blue", "description": "the sea"}, {"label": "Red", "description": "the sun"}},
	}}})
	model := openaitest.NewServer(t,
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_api", Name: "AskUserQuestion", Arguments: string(args)}}},
		openaitest.Response{Text: []string{"red it is"}},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_ask", Name: "AskUserQuestion", Arguments: string(args)}}},
		openaitest.Response{Text: []string{"blue it is"}},
	)
	agent := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"ask:AskUserQuestion\"]\n"
	ts := startTemporalServeAgent(t, model, agent)
	ctx, p, sess, evs := ts.session(t, serverclient.ModeAsk)

	// Through the server's API.
	if _, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "pick a colour"}); err != nil {
		t.Fatal(err)
	}
	req := evs.until("question_request", nil)
	rid, _ := req["request_id"].(string)
	if req["tool_call_id"] != "call_api" || req["tool"] != "AskUserQuestion" || rid == "" || !strings.Contains(fmt.Sprint(req["questions"]), "Which colour?") {
		t.Fatalf("question_request %v", req)
	}
	if _, err := p.api.AnswerQuestion(ctx, sess.ID, rid, serverclient.QuestionAnswer{Answers: map[string]string{"Which colour?": "Red"}}); err != nil {
		t.Fatal(err)
	}
	var apiErr *serverclient.Error
	if _, err := p.api.AnswerQuestion(ctx, sess.ID, rid, serverclient.QuestionAnswer{Dismissed: true}); !errors.As(err, &apiErr) || apiErr.Status != 409 {
		t.Errorf("a second answer: %v, want 409", err)
	}
	evs.until("request_answered", func(m map[string]any) bool { return m["request_id"] == rid && m["kind"] == "question" })
	evs.until("turn_end", func(m map[string]any) bool { return m["reason"] == "done" })

	// With the questions command.
	if _, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "pick again"}); err != nil {
		t.Fatal(err)
	}
	req = evs.until("question_request", nil)
	if req["tool_call_id"] != "call_ask" {
		t.Fatalf("question_request %v", req)
	}
	q := []string{"questions", "--temporal", ts.hostPort, sess.ID}
	var listed string
	for deadline := time.Now().Add(expectWithin); ; {
		r := runHost(t, ts.dir, "", q...)
		if r.code != 0 {
			t.Fatalf("questions: exit %d\nstderr %s", r.code, r.stderr)
		}
		if listed = r.stdout; strings.Contains(listed, "call_ask") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no question listed within %s; last stderr %s", expectWithin, r.stderr)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond): // polls the workflow's query
		}
	}
	for _, want := range []string{"AskUserQuestion", "Which colour?", "one of: Blue | Red"} {
		if !strings.Contains(listed, want) {
			t.Errorf("questions listed %q, want %q in it", listed, want)
		}
	}
	bad := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no answer", []string{"call_ask"}, 2, "give --answer 'QUESTION=ANSWER' for each question, or --dismiss"},
		{"answer to another question", []string{"call_ask", "--answer", "Which size?=Big"}, 2, `no --answer for the question "Which colour?"`},
		{"an extra answer", []string{"call_ask", "--answer", "Which colour?=Blue", "--answer", "Which size?=Big"}, 2, `--answer to "Which size?", which the request does not ask`},
		{"not an answer", []string{"call_ask", "--answer", "Blue"}, 2, `invalid --answer "Blue": want QUESTION=ANSWER`},
		{"both", []string{"call_ask", "--answer", "Which colour?=Blue", "--dismiss"}, 2, "--answer and --dismiss exclude each other"},
		{"an answer without a request", []string{"--dismiss"}, 2, "--answer and --dismiss go with a REQUEST_ID"},
		{"unknown request", []string{"call_nope", "--dismiss"}, 1, "request call_nope: no such question is pending"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			r := runHost(t, ts.dir, "", append(q, b.args...)...)
			if r.code != b.code || !strings.Contains(r.stderr, b.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, want %d with one line saying %q\nstderr %s", r.code, b.code, b.want, r.stderr)
			}
		})
	}
	r := runHost(t, ts.dir, "", append(q, "call_ask", "--answer", "Which colour?=Blue")...)
	if r.code != 0 {
		t.Fatalf("questions answer: exit %d\nstderr %s", r.code, r.stderr)
	}
	evs.until("request_answered", func(m map[string]any) bool {
		return m["request_id"] == req["request_id"] && m["kind"] == "question" && m["decision"] == "answered_elsewhere"
	})
	evs.until("turn_end", func(m map[string]any) bool { return m["reason"] == "done" })
	h, err := p.api.History(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"call_api": "Red", "call_ask": "Blue"} {
		if out := historyToolText(h, id); !strings.Contains(out, want) {
			t.Errorf("the result of %s, %q, does not carry the answer %s", id, out, want)
		}
	}
	r = runHost(t, ts.dir, "", append(q, "call_ask", "--dismiss")...)
	if r.code != 1 || !strings.Contains(r.stderr, "no such question is pending") {
		t.Errorf("answering again: exit %d\nstderr %s", r.code, r.stderr)
	}
}
