package distribution

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/opencontainers/go-digest"
)

// Cache is the content-addressed plugin cache:
// DIR/sha256/HEX/plugin is the binary whose sha256 is HEX, and
// DIR/sources/KEY.json records what a source last resolved to.
type Cache struct{ Dir string }

// DefaultCache is $XDG_CACHE_HOME/kosong-host/plugins (the user's cache
// dir elsewhere).
func DefaultCache() (Cache, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return Cache{}, fmt.Errorf("plugin cache: %v", err)
		}
		dir = d
	}
	return Cache{Dir: filepath.Join(dir, "kosong-host", "plugins")}, nil
}

// BinaryPath is where the binary with digest d is kept.
func (c Cache) BinaryPath(d digest.Digest) string {
	return filepath.Join(c.Dir, d.Algorithm().String(), d.Encoded(), "plugin")
}

// Valid reports whether the cache holds the binary d, whole: a file whose
// content does not match its digest (a corrupt entry) is removed, so it is
// fetched again and never executed.
func (c Cache) Valid(d digest.Digest) bool {
	if d.Validate() != nil {
		return false
	}
	path := c.BinaryPath(d)
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil || "sha256:"+hex.EncodeToString(h.Sum(nil)) != d.String() {
		_ = os.RemoveAll(filepath.Dir(path))
		return false
	}
	return true
}

// put stores the binary read from r (verified to be d by the caller's
// reader), executable.
func (c Cache) put(d digest.Digest, r io.Reader, verify func() error) (string, error) {
	path := c.BinaryPath(d)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("plugin cache: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fetch-*")
	if err != nil {
		return "", fmt.Errorf("plugin cache: %v", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return "", err
	}
	if err := verify(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("plugin cache: %v", err)
	}
	return path, nil
}

// Record is what a source resolved to when it was last installed.
type Record struct {
	Source  string `json:"source"`
	Version string `json:"version,omitempty"`
	// Index is the image index's digest; Manifest and Binary this
	// platform's manifest and binary digests.
	Index    string `json:"index"`
	Platform string `json:"platform"`
	Manifest string `json:"manifest"`
	Binary   string `json:"binary"`
}

func (c Cache) recordPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.Dir, "sources", hex.EncodeToString(sum[:16])+".json")
}

// Record is the last install of the source key (its text and platform),
// if any.
func (c Cache) Record(key string) (Record, bool) {
	b, err := os.ReadFile(c.recordPath(key))
	if err != nil {
		return Record{}, false
	}
	var r Record
	if json.Unmarshal(b, &r) != nil {
		return Record{}, false
	}
	return r, true
}

func (c Cache) saveRecord(key string, r Record) error {
	path := c.recordPath(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
