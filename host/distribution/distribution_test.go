package distribution_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/distribution/registrytest"
)

// proxy sits in front of the registry: status, when set, answers every
// request with that code; tamper flips a byte of every blob it serves.
type proxy struct {
	srv    *httptest.Server
	status atomic.Int32
	tamper atomic.Bool
}

func newProxy(t *testing.T, registryHost string) *proxy {
	p := &proxy{}
	target, _ := url.Parse("http://" + registryHost)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if p.tamper.Load() && strings.Contains(resp.Request.URL.Path, "/blobs/") && resp.StatusCode == http.StatusOK {
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if len(b) > 0 {
				b[len(b)/2] ^= 0xff
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		return nil
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := p.status.Load(); s != 0 {
			if s == http.StatusUnauthorized {
				w.Header().Set("Www-Authenticate", `Basic realm="test"`)
			}
			http.Error(w, `{"errors":[{"code":"UNKNOWN","message":"proxy says no"}]}`, int(s))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *proxy) host() string { return strings.TrimPrefix(p.srv.URL, "http://") }

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRef(t *testing.T, source, version string) distribution.Ref {
	t.Helper()
	r, err := distribution.ParseRef(source, version)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// publish pushes a two-platform plugin to host/team/greet:tag.
func publish(t *testing.T, host, tag string, linux, darwin string) {
	t.Helper()
	ref := mustRef(t, "oci://"+host+"/team/greet:"+tag, "")
	target, err := distribution.Remote(ref, distribution.Options{DockerConfig: filepath.Join(t.TempDir(), "config.json")})
	if err != nil {
		t.Fatal(err)
	}
	bins := []distribution.Binary{
		{Platform: "linux/amd64", Path: writeFile(t, "linux", linux)},
		{Platform: "darwin/arm64", Path: writeFile(t, "darwin", darwin)},
	}
	if _, err := distribution.Publish(context.Background(), target, tag, bins, []byte(`{"Tools":[{"Name":"Greet"}]}`), []string{"Greet"}, tag); err != nil {
		t.Fatal(err)
	}
}

func installer(t *testing.T) *distribution.Installer {
	return &distribution.Installer{
		Cache:   distribution.Cache{Dir: t.TempDir()},
		Options: distribution.Options{DockerConfig: filepath.Join(t.TempDir(), "config.json")},
	}
}

func TestPublishInstallAndInfo(t *testing.T) {
	reg := registrytest.Start(t)
	ctx := context.Background()
	publish(t, reg.Host, "1.2.0", "linux binary 1.2.0", "darwin binary 1.2.0")
	publish(t, reg.Host, "1.3.1", "linux binary 1.3.1", "darwin binary 1.3.1")
	publish(t, reg.Host, "2.0.0", "linux binary 2.0.0", "darwin binary 2.0.0")

	tests := []struct {
		source, version, platform, want string
	}{
		{"oci://" + reg.Host + "/team/greet:1.2.0", "", "linux/amd64", "linux binary 1.2.0"},
		{"oci://" + reg.Host + "/team/greet", "~> 1.2", "darwin/arm64", "darwin binary 1.3.1"},
		{"oci://" + reg.Host + "/team/greet", "~> 1.2.0", "linux/amd64", "linux binary 1.2.0"},
		{"oci://" + reg.Host + "/team/greet", ">= 1.0", "linux/amd64", "linux binary 2.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.source+" "+tc.version, func(t *testing.T) {
			in := installer(t)
			got, err := in.Install(ctx, mustRef(t, tc.source, tc.version), tc.platform, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(got.Path)
			if err != nil || string(b) != tc.want {
				t.Fatalf("installed %q (%v), want %q", b, err, tc.want)
			}
			fi, _ := os.Stat(got.Path)
			if fi.Mode().Perm()&0o100 == 0 {
				t.Fatalf("%s is not executable", got.Path)
			}
			// By digest, as a lock would.
			byDigest := mustRef(t, "oci://"+reg.Host+"/team/greet@"+got.Index, "")
			again, err := in.Install(ctx, byDigest, tc.platform, nil)
			if err != nil || again.Binary != got.Binary {
				t.Fatalf("by digest: %+v, %v", again, err)
			}
		})
	}

	ref := mustRef(t, "oci://"+reg.Host+"/team/greet:1.2.0", "")
	target, _ := distribution.Remote(ref, distribution.Options{})
	info, err := distribution.ReadInfo(ctx, target, ref)
	if err != nil {
		t.Fatal(err)
	}
	if info.Tools != "Greet" || !strings.Contains(string(info.Describe), "Greet") || len(info.Platforms) != 2 {
		t.Fatalf("info = %+v", info)
	}
}

func TestInstallRefusals(t *testing.T) {
	reg := registrytest.Start(t)
	ctx := context.Background()
	publish(t, reg.Host, "1.0.0", "linux 1.0.0", "darwin 1.0.0")
	p := newProxy(t, reg.Host)
	source := "oci://" + p.host() + "/team/greet:1.0.0"

	t.Run("missing platform", func(t *testing.T) {
		_, err := installer(t).Install(ctx, mustRef(t, source, ""), "windows/amd64", nil)
		if err == nil || !strings.Contains(err.Error(), "no windows/amd64 binary in the index (it has darwin/arm64, linux/amd64)") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no tag meets the constraint", func(t *testing.T) {
		_, err := installer(t).Install(ctx, mustRef(t, "oci://"+p.host()+"/team/greet", "~> 3.0"), "linux/amd64", nil)
		if err == nil || !strings.Contains(err.Error(), `no tag meets version "~> 3.0"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("tampered blob", func(t *testing.T) {
		in := installer(t)
		p.tamper.Store(true)
		defer p.tamper.Store(false)
		_, err := in.Install(ctx, mustRef(t, source, ""), "linux/amd64", nil)
		if err == nil || !strings.Contains(err.Error(), "mismatch") {
			t.Fatalf("err = %v", err)
		}
		if entries, _ := os.ReadDir(filepath.Join(in.Cache.Dir, "sha256")); len(entries) > 0 {
			if files, _ := filepath.Glob(filepath.Join(in.Cache.Dir, "sha256", "*", "plugin")); len(files) > 0 {
				t.Fatalf("a tampered blob was cached: %v", files)
			}
		}
	})
	for code, want := range map[int]string{401: "not authorised", 404: "not found", 500: "500"} {
		t.Run("HTTP "+http.StatusText(code), func(t *testing.T) {
			p.status.Store(int32(code))
			defer p.status.Store(0)
			_, err := installer(t).Install(ctx, mustRef(t, source, ""), "linux/amd64", nil)
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), source) {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
	}
}

func TestLockPinsAndStaleLock(t *testing.T) {
	reg := registrytest.Start(t)
	ctx := context.Background()
	publish(t, reg.Host, "1.0.0", "linux one", "darwin one")
	ref := mustRef(t, "oci://"+reg.Host+"/team/greet:1.0.0", "")
	target, _ := distribution.Remote(ref, distribution.Options{})
	pin, err := distribution.Lock(ctx, target, ref, []string{"linux/amd64", "darwin/arm64"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pin.Platforms) != 2 || pin.Version != "1.0.0" {
		t.Fatalf("pin = %+v", pin)
	}
	if _, err := distribution.Lock(ctx, target, ref, []string{"windows/arm64"}); err == nil || !strings.Contains(err.Error(), "no windows/arm64") {
		t.Fatalf("lock of a missing platform: %v", err)
	}
	// Verified against the lock on the other platform.
	if _, err := installer(t).Install(ctx, ref, "darwin/arm64", &pin); err != nil {
		t.Fatal(err)
	}
	// The tag moves: the lock is stale.
	publish(t, reg.Host, "1.0.0", "linux two", "darwin two")
	_, err = installer(t).Install(ctx, ref, "linux/amd64", &pin)
	if err == nil || !strings.Contains(err.Error(), "the lock file pins index "+pin.Index) {
		t.Fatalf("stale lock: %v", err)
	}
}

func TestOfflineAndCorruptCache(t *testing.T) {
	reg := registrytest.Start(t)
	ctx := context.Background()
	publish(t, reg.Host, "1.0.0", "linux one", "darwin one")
	ref := mustRef(t, "oci://"+reg.Host+"/team/greet:1.0.0", "")
	warm := installer(t)
	first, err := warm.Install(ctx, ref, "linux/amd64", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A corrupt entry is removed and fetched again, never handed out.
	if err := os.WriteFile(first.Path, []byte("evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := warm.Cached(ref, "linux/amd64", nil); ok {
		t.Fatal("a corrupt cache entry was reported valid")
	}
	again, err := warm.Install(ctx, ref, "linux/amd64", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again.Path); string(b) != "linux one" {
		t.Fatalf("re-fetched %q", b)
	}

	reg.Stop()
	got, err := warm.Install(ctx, ref, "linux/amd64", nil)
	if err != nil || got.From != "cache" {
		t.Fatalf("offline with a warm cache: %+v, %v", got, err)
	}
	_, err = installer(t).Install(ctx, ref, "linux/amd64", nil)
	if err == nil || !strings.Contains(err.Error(), "has no copy") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("offline with a cold cache: %v", err)
	}
}

func TestMirrorWithTheRegistryStopped(t *testing.T) {
	reg := registrytest.Start(t)
	ctx := context.Background()
	publish(t, reg.Host, "1.0.0", "linux one", "darwin one")
	ref := mustRef(t, "oci://"+reg.Host+"/team/greet:1.0.0", "")
	target, _ := distribution.Remote(ref, distribution.Options{})
	pin, err := distribution.Lock(ctx, target, ref, []string{"linux/amd64", "darwin/arm64"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := distribution.Mirror(ctx, target, ref, pin.Index, pin.Version, dir); err != nil {
		t.Fatal(err)
	}
	reg.Stop()
	in := installer(t)
	in.Mirrors = []string{dir}
	got, err := in.Install(ctx, ref, "darwin/arm64", &pin)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(got.Path); string(b) != "darwin one" || !strings.HasPrefix(got.From, "mirror ") {
		t.Fatalf("from the mirror: %q, %+v", b, got)
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct{ source, version, want, err string }{
		{"oci://ghcr.io/team/greet:1.0", "", "oci://ghcr.io/team/greet:1.0", ""},
		{"oci://ghcr.io/team/greet", "", "oci://ghcr.io/team/greet:latest", ""},
		{"oci://ghcr.io/team/greet@sha256:" + strings.Repeat("a", 64), "", "oci://ghcr.io/team/greet@sha256:" + strings.Repeat("a", 64), ""},
		{"oci://ghcr.io/team/greet", "~> 1.2", "oci://ghcr.io/team/greet (version ~> 1.2)", ""},
		{"ghcr.io/team/greet", "", "", "want oci://"},
		{"oci://ghcr.io/team/greet:1.0", "~> 1.2", "", "without tag or digest"},
		{"oci://ghcr.io/team/greet", "~> banana", "", `version "~> banana"`},
		{"oci://ghcr.io/Team/greet", "", "", "invalid"},
	}
	for _, tc := range tests {
		r, err := distribution.ParseRef(tc.source, tc.version)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRef(%q, %q) error = %v, want %q", tc.source, tc.version, err, tc.err)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRef(%q, %q) = %q, %v; want %q", tc.source, tc.version, r.String(), err, tc.want)
		}
	}
}

// TestMirrorKeepsSignatures: a referrer of the index (a signature) is in
// the mirror after it is opened again.
func TestMirrorKeepsSignatures(t *testing.T) {
	reg := registrytest.Start(t)
	ctx := context.Background()
	publish(t, reg.Host, "1.0.0", "linux one", "darwin one")
	ref := mustRef(t, "oci://"+reg.Host+"/team/greet:1.0.0", "")
	target, _ := distribution.Remote(ref, distribution.Options{})
	_, idx, err := distribution.ResolveIndex(ctx, target, ref)
	if err != nil {
		t.Fatal(err)
	}
	sig := []byte(`{"sig":1}`)
	layer := ocispec.Descriptor{MediaType: "application/vnd.test.sig", Digest: digest.FromBytes(sig), Size: int64(len(sig))}
	if err := target.Push(ctx, layer, bytes.NewReader(sig)); err != nil {
		t.Fatal(err)
	}
	if _, err := oras.PackManifest(ctx, target, oras.PackManifestVersion1_1, "application/vnd.test.sig",
		oras.PackManifestOptions{Subject: &idx, Layers: []ocispec.Descriptor{layer}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := distribution.Mirror(ctx, target, ref, idx.Digest.String(), "1.0.0", dir); err != nil {
		t.Fatal(err)
	}
	layout, err := distribution.Layout(dir, ref)
	if err != nil {
		t.Fatal(err)
	}
	preds, err := layout.Predecessors(ctx, idx)
	if err != nil || len(preds) != 1 {
		t.Fatalf("referrers in the mirror: %v, %v", preds, err)
	}
}
