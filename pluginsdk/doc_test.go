package pluginsdk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestDocListsEveryCapability: the package documentation and NewTool's
// name every capability a constructor may take, and the grace period.
func TestDocListsEveryCapability(t *testing.T) {
	fset := token.NewFileSet()
	docs := map[string]string{}
	for _, file := range []string{"doc.go", "tool.go"} {
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			docs["package doc"] += f.Doc.Text()
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "NewTool" {
				docs["NewTool"] = fn.Doc.Text()
			}
		}
	}
	for where, text := range docs {
		for _, name := range capTypes {
			if name != localLogger && !strings.Contains(text, name) {
				t.Errorf("the %s does not name the %s capability", where, name)
			}
		}
		if !strings.Contains(text, "grace period") {
			t.Errorf("the %s does not state the grace period", where)
		}
	}
	if len(docs) != 2 {
		t.Fatalf("found %d docs", len(docs))
	}
}
