package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/distribution/registrytest"
	"github.com/kosong-host/kosong-host/host/signing/cosigntest"
)

// TestCosignVerifiesPublishedSignature: what `plugins publish --sign`
// pushes to a real registry is what the real cosign verifies (a Sigstore
// bundle as an OCI 1.1 referrer of the index), with the command
// docs/distribution.md gives; cosign refuses it for another key and an
// unsigned artifact.
func TestCosignVerifiesPublishedSignature(t *testing.T) {
	cosign := cosigntest.Need(t)
	reg := registrytest.Start(t)
	echo := standalonePlugin(t, "echo")
	keys := t.TempDir()
	e := newOCIEnv(t, t.TempDir())
	e.must("plugins", "keygen", filepath.Join(keys, "team"))
	e.must("plugins", "keygen", filepath.Join(keys, "other"))
	signed := reg.Host + "/team/echo:1.0.0"
	e.must("plugins", "publish", "oci://"+signed, "--platform", "linux/amd64="+echo, "--sign", filepath.Join(keys, "team.key"))
	unsigned := reg.Host + "/team/echo:0.9.0"
	e.must("plugins", "publish", "oci://"+unsigned, "--platform", "linux/amd64="+copyWithSuffix(t, echo, "unsigned"))

	verify := func(key, ref string) (string, error) {
		cmd := exec.Command(cosign, "verify", "--key", key, "--insecure-ignore-tlog=true", "--allow-http-registry", ref)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "DOCKER_CONFIG="+t.TempDir(), "TUF_ROOT="+t.TempDir())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := verify(filepath.Join(keys, "team.pub"), signed)
	if err != nil {
		t.Fatalf("cosign verify with the signing key: %v\n%s", err, out)
	}
	if !strings.Contains(out, "verified against the specified public key") {
		t.Fatalf("cosign verify says no key check:\n%s", out)
	}
	for _, bad := range []struct{ name, key, ref, want string }{
		{"another key", filepath.Join(keys, "other.pub"), signed, "failed to verify signature"},
		{"unsigned", filepath.Join(keys, "team.pub"), unsigned, "no signatures found"},
	} {
		out, err := verify(bad.key, bad.ref)
		if err == nil || !strings.Contains(out, bad.want) {
			t.Errorf("%s: cosign verify: %v, want a failure saying %q: %s", bad.name, err, bad.want, lastLines(out))
		}
	}
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}
