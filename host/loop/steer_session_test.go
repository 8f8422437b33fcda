package loop_test

import (
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/providers"
)

// TestSteeredIsNotATurn: a steered message is the user's, but not the start
// of a turn: the session listing and /undo, which find turns by the user's
// prompts, pass over it, so /undo takes back the whole turn it steered.
func TestSteeredIsNotATurn(t *testing.T) {
	steered := providers.Message{Role: providers.RoleUser,
		Content: []providers.ContentPart{providers.TextPart(loop.SteeredNote), providers.TextPart("also the tests")}}
	if p, ok := session.UserPrompt(steered); ok {
		t.Fatalf("a steered message is taken for a prompt: %q", p)
	}
	typed := providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("fix it")}}
	if p, ok := session.UserPrompt(typed); !ok || p != "fix it" {
		t.Fatalf("a typed prompt: %q %v", p, ok)
	}
}
