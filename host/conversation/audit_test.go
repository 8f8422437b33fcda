package conversation

import (
	"context"
	"testing"

	"github.com/kosong-host/kosong-host/host/audit"
)

// TestAuditAfterClearAndServerLog: after /clear the audit records go to
// the new session's log, with its id; a server's log (AuditAlso) gets the
// records of both sessions.
func TestAuditAfterClearAndServerLog(t *testing.T) {
	cfg := setup(t, map[string]string{"script.yaml": "turns:\n  - tool_calls:\n      - {id: x1, name: Nope, arguments: {}}\n  - text: One.\n" +
		"  - tool_calls:\n      - {id: x2, name: Nope, arguments: {}}\n  - text: Two.\n"})
	serverDir := t.TempDir()
	serverLog, err := audit.Open(serverDir, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuditAlso = serverLog
	conv, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	first, firstDir := conv.ID(), conv.Session().Dir
	if _, err := conv.Turn(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	if err := conv.Clear(context.Background()); err != nil {
		t.Fatal(err)
	}
	second, secondDir := conv.ID(), conv.Session().Dir
	if _, err := conv.Turn(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	conv.Close()
	serverLog.Close()
	for _, tt := range []struct{ dir, session, call string }{{firstDir, first, "x1"}, {secondDir, second, "x2"}} {
		calls, err := audit.Read(tt.dir)
		if err != nil || len(calls) != 1 || calls[0].CallID != tt.call || calls[0].Session != tt.session || calls[0].Status != "error" {
			t.Fatalf("log of %s: %+v %v", tt.session, calls, err)
		}
	}
	calls, err := audit.Read(serverDir)
	if err != nil || len(calls) != 2 || calls[0].Session != first || calls[1].Session != second {
		t.Fatalf("server log: %+v %v", calls, err)
	}
}
