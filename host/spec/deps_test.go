package spec

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLinksNoProviderSDK: host/spec learns the provider key variables from
// the providers package, not from the registry, so it links no provider
// SDK.
func TestLinksNoProviderSDK(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command")
		}
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/kosong-host/kosong-host/providers/",
		"github.com/anthropics/anthropic-sdk-go",
		"google.golang.org/genai",
		"github.com/sashabaranov/go-openai",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) && pkg != "github.com/kosong-host/kosong-host/providers/timeouts" {
				t.Errorf("host/spec depends on %s", pkg)
			}
		}
	}
}
