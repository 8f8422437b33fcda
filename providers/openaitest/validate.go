package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/internal/fakeapi"
)

// NewValidatingServer is NewServer checking, as OpenAI does, that the
// history of every request pairs tool calls with tool messages (see
// ValidateHistory). A request that does not is answered with HTTP 400 and
// an OpenAI-style error saying what is wrong; it takes no scripted
// response and is not recorded.
func NewValidatingServer(t testing.TB, responses ...Response) *Server {
	t.Helper()
	s := &Server{Script: fakeapi.NewScript[Response, Request](responses)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "openaitest: reading the request: "+err.Error())
			return
		}
		var chat ChatRequest
		if json.Unmarshal(body, &chat) == nil {
			if err := ValidateHistory(chat.Messages); err != nil {
				writeError(w, http.StatusBadRequest, "openaitest: invalid messages: "+err.Error())
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.serve(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// ValidateHistory checks the tool messages of a chat history the way the
// chat completions API does: an assistant message with tool_calls is
// followed by exactly one tool message per call (and nothing else until
// they are all there), and every tool message answers a call of the
// assistant message before it.
func ValidateHistory(msgs []Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch {
		case m.Role == "tool":
			return fmt.Errorf("messages[%d]: a message with role 'tool' (tool_call_id %q) must answer a preceding message with 'tool_calls'", i, m.ToolCallID)
		case m.Role == "assistant" && len(m.ToolCalls) > 0:
			open := map[string]bool{}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Errorf("messages[%d]: a tool call of %s has no id", i, tc.Function.Name)
				}
				if open[tc.ID] {
					return fmt.Errorf("messages[%d]: tool call id %s is used twice", i, tc.ID)
				}
				open[tc.ID] = true
			}
			j := i + 1
			for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
				id := msgs[j].ToolCallID
				if !open[id] {
					return fmt.Errorf("messages[%d]: tool message for tool_call_id %q answers no open call of messages[%d] (a call has exactly one result)", j, id, i)
				}
				delete(open, id)
			}
			if len(open) > 0 {
				var ids []string
				for _, tc := range m.ToolCalls {
					if open[tc.ID] {
						ids = append(ids, tc.ID)
					}
				}
				return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; these had none: %s", i, strings.Join(ids, ", "))
			}
			i = j - 1
		}
	}
	return nil
}
