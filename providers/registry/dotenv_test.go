package registry_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/registry"
)

// TestIgnoreDotEnv: with IgnoreDotEnv the work dir's .env is not read at
// all: its key does not count and an unreadable .env is no error.
func TestIgnoreDotEnv(t *testing.T) {
	tests := []struct {
		name, dotenv string
		ignore       bool
		wantErr      string
	}{
		{name: "read", dotenv: "KIMI_API_KEY=from-file\n"},
		{name: "ignored", dotenv: "KIMI_API_KEY=from-file\n", ignore: true, wantErr: "KIMI_API_KEY"},
		{name: "unreadable read", dotenv: "KIMI_API_KEY='unterminated\n", wantErr: ".env"},
		{name: "unreadable ignored", dotenv: "KIMI_API_KEY='unterminated\nOPENAI_API_KEY=x\n", ignore: true, wantErr: "KIMI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, ".env"), tt.dotenv)
			_, err := registry.Select(registry.Options{Provider: "kimi", WorkDir: dir, IgnoreDotEnv: tt.ignore,
				Getenv: envOf(nil), ConfigPath: writeEmptyConfig(t)})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}

func writeEmptyConfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "config.yaml")
	write(t, p, "{}\n")
	return p
}
