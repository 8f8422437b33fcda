package plugin

import (
	"reflect"
	"testing"

	"github.com/kosong-host/kosong-host/host/sandbox"
)

func TestSessionFree(t *testing.T) {
	state := "/tmp/sess-1"
	sb := &sandbox.Policy{Plugin: "file", Read: []string{"/", state}, Write: []string{"/work", state + "/plugins/file", "/tmp/sess-10"}}
	got := sessionFree(sb, state)
	want := &sandbox.Policy{Plugin: "file", Read: []string{"/", "$STATE_DIR"}, Write: []string{"/work", "$STATE_DIR/plugins/file", "/tmp/sess-10"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sessionFree: %+v, want %+v", got, want)
	}
	if sb.Write[1] != state+"/plugins/file" {
		t.Fatal("sessionFree changed the policy it was given")
	}
	// Another session's state dir: the same key.
	other := &sandbox.Policy{Plugin: "file", Read: []string{"/", "/tmp/sess-2"}, Write: []string{"/work", "/tmp/sess-2/plugins/file", "/tmp/sess-10"}}
	if !reflect.DeepEqual(sessionFree(other, "/tmp/sess-2"), want) {
		t.Fatal("two sessions' policies differ")
	}
	if sessionFree(nil, state) != nil || sessionFree(sb, "") != sb {
		t.Fatal("nothing to free")
	}
}
