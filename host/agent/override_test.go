package agent_test

import (
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
)

func TestOverrideNotice(t *testing.T) {
	tests := []struct {
		list []agent.Override
		want string
	}{
		{nil, ""},
		{[]agent.Override{{Name: "shell", Path: "/p/kosong-plugin-shell"}},
			"built-in plugin replaced by an installed binary that no pin names: shell by /p/kosong-plugin-shell " +
				"(pin it with `kosong-host plugins lock`, or remove it to use the built-in)"},
		{[]agent.Override{{Name: "shell", Path: "/p/a"}, {Name: "web", Path: "/p/b"}},
			"built-in plugins replaced by installed binaries that no pin names: shell by /p/a, web by /p/b " +
				"(pin them with `kosong-host plugins lock`, or remove them to use the built-ins)"},
	}
	for _, tt := range tests {
		if got := agent.OverrideNotice(tt.list); got != tt.want {
			t.Errorf("OverrideNotice(%v) = %q, want %q", tt.list, got, tt.want)
		}
	}
}
