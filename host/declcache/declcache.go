// Package declcache keeps what plugin binaries declared (their tools'
// names, descriptions, schemas, capabilities, and which tools loaded or
// were skipped for given inputs), so that a session offers a plugin's
// tools to the model without starting it: the plugin starts at its first
// call (host/plugin). A record is a declaration, never a verdict: the
// binary's pins and sandbox are checked when it really starts, and what
// it then declares must match the record.
//
// Records are files named by the sha256 of their key, written whole
// (through a rename) under the user's cache folder, kosong-host/declarations.
// A record that cannot be read, is too big, or is not what its key says
// is ignored by the reader (host/plugin), which describes the plugin again.
package declcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxRecordBytes bounds a record read back: a bigger file is ignored.
const MaxRecordBytes = 8 << 20

// Store keeps records by key.
type Store interface {
	// Get returns the record kept under key, if any.
	Get(key string) ([]byte, bool)
	// Put keeps data under key; a failure only costs a describe later.
	Put(key string, data []byte) error
	// Drop forgets the record under key.
	Drop(key string)
}

// Dir is a Store in a folder.
type Dir struct{ Path string }

// CacheDirEnv names the variable that overrides the host's cache folder
// (tests give each host one of its own).
const CacheDirEnv = "KOSONG_CACHE_DIR"

// CacheDir is the host's cache folder: $KOSONG_CACHE_DIR, else the user's
// cache folder's kosong-host ($XDG_CACHE_HOME or ~/.cache on Linux).
func CacheDir() (string, error) {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("%s=%s is not an absolute path", CacheDirEnv, dir)
		}
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "kosong-host"), nil
}

// Default is the Store in the host's cache folder (CacheDir):
// declarations.
func Default() (*Dir, error) {
	dir, err := CacheDir()
	if err != nil {
		return nil, fmt.Errorf("declaration cache: %w", err)
	}
	return &Dir{Path: filepath.Join(dir, "declarations")}, nil
}

// Key is the key of the values given: the sha256 of their JSON.
func Key(parts ...any) string {
	data, err := json.Marshal(parts)
	if err != nil {
		// Only values that cannot be JSON (channels, functions) get here:
		// a key no record is kept under.
		return ""
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func (d *Dir) file(key string) (string, bool) {
	if d == nil || d.Path == "" || len(key) != 64 {
		return "", false
	}
	if _, err := hex.DecodeString(key); err != nil {
		return "", false
	}
	return filepath.Join(d.Path, key[:2], key+".json"), true
}

// Get implements Store.
func (d *Dir) Get(key string) ([]byte, bool) {
	path, ok := d.file(key)
	if !ok {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxRecordBytes+1))
	if err != nil || len(data) > MaxRecordBytes {
		return nil, false
	}
	return data, true
}

// Put implements Store.
func (d *Dir) Put(key string, data []byte) error {
	path, ok := d.file(key)
	if !ok {
		return errors.New("declaration cache: no folder or an invalid key")
	}
	if len(data) > MaxRecordBytes {
		return fmt.Errorf("declaration cache: a record of %d bytes is over the limit", len(data))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("declaration cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("declaration cache: %w", err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("declaration cache: %w", err)
	}
	return nil
}

// Drop implements Store.
func (d *Dir) Drop(key string) {
	if path, ok := d.file(key); ok {
		_ = os.Remove(path)
	}
}
