package testcomponent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoBinary builds a small command from the module proxy (once per
// machine) and finds it cached the second time; a module that does not exist is a
// one-line error naming it.
func TestGoBinary(t *testing.T) {
	// A small command from golang.org/x/tools.
	bin, err := GoBinary("golang.org/x/tools", "v0.52.0", "cmd/stringer", "stringer")
	if err != nil {
		Missing(t, err)
	}
	out, err := exec.Command(bin, "-h").CombinedOutput()
	if !strings.Contains(string(out), "stringer") {
		t.Fatalf("%s -h: %v: %s", bin, err, out)
	}
	st, _ := os.Stat(bin)
	again, err := GoBinary("golang.org/x/tools", "v0.52.0", "cmd/stringer", "stringer")
	if err != nil || again != bin {
		t.Fatalf("second GoBinary = %q, %v; want %q", again, err, bin)
	}
	if st2, _ := os.Stat(bin); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("the cached binary was built again")
	}
	cache, _ := os.UserCacheDir()
	if filepath.Dir(filepath.Dir(bin)) != filepath.Join(cache, "kosong-host-test") {
		t.Errorf("built at %s, not under the user's cache dir", bin)
	}
	nothing := fmt.Sprintf("nothing%d", time.Now().UnixNano()) // a folder no earlier run made
	_, err = GoBinary("example.invalid/nothing", "v0.0.1", ".", nothing)
	if err == nil || !strings.Contains(err.Error(), "example.invalid/nothing") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a missing module: %v; want one line naming it", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "kosong-host-test", nothing+"-v0.0.1")); !os.IsNotExist(err) {
		t.Errorf("a failed build left its folder: %v", err)
	}
}

// Without npm, NpmPackage says so and installs nothing.
func TestNPMPackageWithoutNPM(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Setenv("PATH", t.TempDir())
	_, err := NpmPackage("some-package", "1.0.0")
	if err == nil || !strings.Contains(err.Error(), "some-package@1.0.0 needs npm") {
		t.Fatalf("err %v, want one saying npm is needed", err)
	}
}
