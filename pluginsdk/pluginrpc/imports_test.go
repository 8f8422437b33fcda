package pluginrpc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyPluginrpcImportsTheProto: no package of the module but this one
// and the generated one imports the generated protobuf package (test files
// and test plugins under testdata, which speak the raw wire on purpose,
// aside). Build tags are ignored: every OS's files count.
func TestOnlyPluginrpcImportsTheProto(t *testing.T) {
	const proto = "github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	allowed := map[string]bool{filepath.Join(root, "pluginsdk", "pluginrpc"): true, filepath.Join(root, "pluginsdk", "proto", "pluginv1"): true}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == proto && !allowed[filepath.Dir(path)] {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: only pluginsdk/pluginrpc speaks the generated types", rel, proto)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files under %s: not the module", files, root)
	}
}
