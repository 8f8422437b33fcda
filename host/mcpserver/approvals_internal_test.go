package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
)

// TestElicitMessageNamesEachEditedFileOnce: a large edit's diff comes as
// one block a hunk; the message names its file once.
func TestElicitMessageNamesEachEditedFileOnce(t *testing.T) {
	diff := func(path string) approval.Display {
		data, _ := json.Marshal(map[string]any{"path": path, "old_text": "a", "new_text": "b"})
		return approval.Display{Kind: "diff", Data: data}
	}
	req := approval.Request{ToolName: "StrReplaceFile", Action: "edit file",
		Display: []approval.Display{diff("big.json"), diff("big.json"), diff("big.json"), diff("other.go")}}
	msg := elicitMessage(req)
	if n := strings.Count(msg, "edit big.json"); n != 1 {
		t.Errorf("big.json named %d times:\n%s", n, msg)
	}
	if !strings.Contains(msg, "edit other.go") {
		t.Errorf("other.go not named:\n%s", msg)
	}
}
