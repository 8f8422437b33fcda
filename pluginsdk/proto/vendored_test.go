// Package proto_test checks the vendored service definitions beside the
// plugin wire's own (see docs/plugin-protocol.md): a plugin in another language builds its
// stubs from them, so they must be what the Go host actually speaks.
package proto_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestGoPluginProtosMatchModule: the goplugin/*.proto files are the ones of
// the go-plugin version go.mod requires.
func TestGoPluginProtosMatchModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/hashicorp/go-plugin").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/hashicorp/go-plugin: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "internal", "plugin")
	for _, name := range []string{"grpc_broker.proto", "grpc_controller.proto", "grpc_stdio.proto"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join("goplugin", name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("goplugin/%s differs from %s: copy it again", name, filepath.Join(dir, name))
			}
		})
	}
}

// TestHealthProtoMatchesGRPC: grpc/health/v1/health.proto declares the
// package, messages, fields and methods compiled into grpc-go's health
// service, which go-plugin serves and the host calls.
func TestHealthProtoMatchesGRPC(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("grpc", "health", "v1", "health.proto"))
	if err != nil {
		t.Fatal(err)
	}
	text := normalize(string(raw))
	fd := grpc_health_v1.File_grpc_health_v1_health_proto
	pkg := string(fd.Package())
	want := []string{fmt.Sprintf("package %s;", pkg)}
	rel := func(n protoreflect.FullName) string { return strings.TrimPrefix(string(n), pkg+".") }
	var fields func(m protoreflect.MessageDescriptor)
	fields = func(m protoreflect.MessageDescriptor) {
		want = append(want, fmt.Sprintf("message %s {", m.Name()))
		for i := 0; i < m.Enums().Len(); i++ {
			e := m.Enums().Get(i)
			want = append(want, fmt.Sprintf("enum %s {", e.Name()))
			for j := 0; j < e.Values().Len(); j++ {
				want = append(want, fmt.Sprintf("%s = %d;", e.Values().Get(j).Name(), e.Values().Get(j).Number()))
			}
		}
		for i := 0; i < m.Fields().Len(); i++ {
			f := m.Fields().Get(i)
			typ := f.Kind().String()
			switch {
			case f.IsMap():
				typ = fmt.Sprintf("map<%s, %s>", f.MapKey().Kind(), rel(f.MapValue().Message().FullName()))
			case f.Kind() == protoreflect.MessageKind:
				typ = rel(f.Message().FullName())
			case f.Kind() == protoreflect.EnumKind:
				typ = string(f.Enum().Name())
			}
			if f.IsList() {
				typ = "repeated " + typ
			}
			want = append(want, fmt.Sprintf("%s %s = %d;", typ, f.Name(), f.Number()))
		}
	}
	for i := 0; i < fd.Messages().Len(); i++ {
		fields(fd.Messages().Get(i))
	}
	for i := 0; i < fd.Services().Len(); i++ {
		s := fd.Services().Get(i)
		want = append(want, fmt.Sprintf("service %s {", s.Name()))
		for j := 0; j < s.Methods().Len(); j++ {
			m := s.Methods().Get(j)
			in, out := rel(m.Input().FullName()), rel(m.Output().FullName())
			if m.IsStreamingClient() {
				in = "stream " + in
			}
			if m.IsStreamingServer() {
				out = "stream " + out
			}
			want = append(want, fmt.Sprintf("rpc %s(%s) returns (%s);", m.Name(), in, out))
		}
	}
	for _, w := range want {
		if !strings.Contains(text, normalize(w)) {
			t.Errorf("health.proto lacks %q", w)
		}
	}
	if got, n := strings.Count(text, "message "), fd.Messages().Len(); got != n {
		t.Errorf("health.proto declares %d messages, grpc-go %d", got, n)
	}
	if got, n := strings.Count(text, " rpc "), fd.Services().Get(0).Methods().Len(); got != n {
		t.Errorf("health.proto declares %d methods, grpc-go %d", got, n)
	}
}

var (
	comment = regexp.MustCompile(`//[^\n]*`)
	space   = regexp.MustCompile(`\s+`)
)

// normalize drops comments, sets braces apart and folds white space to
// single spaces.
func normalize(s string) string {
	s = strings.NewReplacer("{", " { ", "}", " } ").Replace(comment.ReplaceAllString(s, ""))
	return " " + strings.TrimSpace(space.ReplaceAllString(s, " ")) + " "
}
