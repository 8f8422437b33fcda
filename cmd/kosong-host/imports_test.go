package main

import (
	"go/build"
	"strings"
	"testing"
)

// TestFrontEndsImportNoWireCode: the front ends and the command reach
// plugins only through host/conversation: none imports the capability
// servers, gRPC or the generated protobuf package itself.
func TestFrontEndsImportNoWireCode(t *testing.T) {
	forbidden := []string{
		"github.com/kosong-host/kosong-host/host/capability",
		"github.com/kosong-host/kosong-host/pluginsdk/proto/",
		"google.golang.org/grpc",
	}
	for _, dir := range []string{".", "../../host/repl", "../../host/frontend/acp", "../../host/frontend/wire"} {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(pkg.Imports) == 0 {
			t.Fatalf("%s: no imports read", dir)
		}
		for _, imp := range pkg.Imports {
			for _, f := range forbidden {
				if imp == f || strings.HasPrefix(imp, f) {
					t.Errorf("%s imports %s", pkg.ImportPath, imp)
				}
			}
		}
	}
}
