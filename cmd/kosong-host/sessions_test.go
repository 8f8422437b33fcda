package main

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/session"
)

func TestPick(t *testing.T) {
	list := []session.Info{{ID: "s1", FirstPrompt: "fix the build"}, {ID: "s2"}}
	tests := []struct {
		name, input, want, wantErr string
	}{
		{name: "first", input: "1\n", want: "s1"},
		{name: "second after a bad answer", input: "x\n9\n2\n", want: "s2"},
		{name: "end of input", input: "", wantErr: "no session picked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			got, err := pick(list, strings.NewReader(tt.input), &out)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v", got, err)
			}
			if !strings.Contains(out.String(), " 1) ") || !strings.Contains(out.String(), "fix the build") {
				t.Fatalf("list shown:\n%s", out.String())
			}
		})
	}
}
