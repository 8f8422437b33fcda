package pluginrpc

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestTLSFromEnvErrors(t *testing.T) {
	t.Run("not set", func(t *testing.T) {
		t.Setenv(TLSFDEnv, "")
		if cfg, err := TLSFromEnv(); cfg != nil || err != nil {
			t.Fatalf("got %v, %v", cfg, err)
		}
	})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, _ = w.WriteString(`{"cert_pem": "bm90IGEgY2VydA=="}`)
	w.Close()
	tests := []struct{ name, fd, want string }{
		{"not a number", "x", `KOSONG_PLUGIN_TLS_FD="x" is not an inherited file descriptor`},
		{"stdio", "2", `KOSONG_PLUGIN_TLS_FD="2" is not an inherited file descriptor`},
		{"bundle not usable", strconv.Itoa(int(r.Fd())), "plugin TLS: tls: failed to find any PEM data in certificate input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(TLSFDEnv, tt.fd)
			if _, err := TLSFromEnv(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
