package signing

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
)

func keyPair(t *testing.T) (*Key, TrustedKey) {
	t.Helper()
	priv, pub, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.key"), priv, 0o600)
	os.WriteFile(filepath.Join(dir, "k.pub"), pub, 0o644)
	k, err := LoadKey(filepath.Join(dir, "k.key"))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := LoadPublicKey(filepath.Join(dir, "k.pub"))
	if err != nil {
		t.Fatal(err)
	}
	return k, tk
}

func artifact(t *testing.T, st *oci.Store, body string) ocispec.Descriptor {
	t.Helper()
	d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, []byte(body))
	if err := st.Push(context.Background(), d, bytes.NewReader([]byte(body))); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSignAndVerify(t *testing.T) {
	ctx := context.Background()
	st, err := oci.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, trusted := keyPair(t)
	_, other := keyPair(t)
	signed := artifact(t, st, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`)
	unsigned := artifact(t, st, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[],"annotations":{"a":"b"}}`)
	if _, err := Sign(ctx, st, "127.0.0.1:5000/team/greet", signed, key); err != nil {
		t.Fatal(err)
	}
	got, err := Verify(ctx, st, signed, []TrustedKey{other, trusted})
	if err != nil || got.Name != trusted.Name {
		t.Fatalf("verify: %v, %v", got.Name, err)
	}
	if _, err := Verify(ctx, st, signed, []TrustedKey{other}); err == nil || !strings.Contains(err.Error(), "not by a listed key") {
		t.Fatalf("another key: %v", err)
	}
	if _, err := Verify(ctx, st, unsigned, []TrustedKey{trusted}); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("unsigned: %v", err)
	}
}

func TestKeyErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("not a key"), 0o600)
	if _, err := LoadKey(bad); err == nil || !strings.Contains(err.Error(), "not a PEM private key") {
		t.Errorf("LoadKey: %v", err)
	}
	if _, err := LoadPublicKey(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadPublicKey: %v", err)
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); err == nil {
		t.Error("LoadKey of a missing file")
	}
}
