// Package trust holds the trusted folders: which folders the user allowed
// to use their project files (./.kosong/agent.yaml or ./agent.yaml, all
// they pull in, and .env), each with a digest of those files, so that a
// change to any of them asks again.
//
// A Store is one JSON file (trust.json beside the sessions folder,
// $XDG_STATE_HOME/kosong-host), mode 0600, replaced atomically on every
// change. Scan reads what a folder's project files would run and digests
// them; it reads files but executes nothing.
package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/session"
)

// FileName is the store's file name in the state folder.
const FileName = "trust.json"

// storeVersion is the only version of the store's format.
const storeVersion = 1

// Entry is one trusted folder.
type Entry struct {
	// Folder is the absolute folder, symbolic links resolved.
	Folder string `json:"folder"`
	// Digest is Project.Digest of the folder's project files when they
	// were trusted.
	Digest string `json:"digest"`
	// TrustedAt is when the user trusted them.
	TrustedAt time.Time `json:"trusted_at"`
}

// file is the store's JSON document.
type file struct {
	Version int     `json:"version"`
	Folders []Entry `json:"folders"`
}

// Store is the file of trusted folders at Path.
type Store struct {
	Path string
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// DefaultPath is the store of the user: trust.json beside the sessions
// folder ($XDG_STATE_HOME/kosong-host/trust.json, else
// ~/.local/state/kosong-host/trust.json).
func DefaultPath(getenv func(string) string) (string, error) {
	root, err := session.Root(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(root), FileName), nil
}

// Folder is dir as the store keys it: absolute, cleaned, symbolic links
// resolved. The folder must exist.
func Folder(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	return real, nil
}

// Lookup is the entry of folder (as Folder returns it), if trusted.
func (s *Store) Lookup(folder string) (Entry, bool, error) {
	f, err := s.read()
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range f.Folders {
		if e.Folder == folder {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// Trusted reports whether folder is trusted with files of this digest.
func (s *Store) Trusted(folder, digest string) (bool, error) {
	e, ok, err := s.Lookup(folder)
	return ok && e.Digest == digest, err
}

// Trust records folder as trusted with files of digest, replacing what
// was recorded for it.
func (s *Store) Trust(folder, digest string) error {
	f, err := s.read()
	if err != nil {
		return err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	f.Folders = slices.DeleteFunc(f.Folders, func(e Entry) bool { return e.Folder == folder })
	f.Folders = append(f.Folders, Entry{Folder: folder, Digest: digest, TrustedAt: now().UTC().Truncate(time.Second)})
	return s.write(f)
}

// Revoke forgets folder; it reports whether folder was trusted.
func (s *Store) Revoke(folder string) (bool, error) {
	f, err := s.read()
	if err != nil {
		return false, err
	}
	n := len(f.Folders)
	f.Folders = slices.DeleteFunc(f.Folders, func(e Entry) bool { return e.Folder == folder })
	if len(f.Folders) == n {
		return false, nil
	}
	return true, s.write(f)
}

// List is every trusted folder, sorted by folder.
func (s *Store) List() ([]Entry, error) {
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(f.Folders, func(a, b Entry) int { return strings.Compare(a.Folder, b.Folder) })
	return f.Folders, nil
}

// read reads the store; a missing file is an empty store. Any other
// problem is a one-line error naming the file: the store is never
// guessed at or overwritten when it cannot be read.
func (s *Store) read() (*file, error) {
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Version: storeVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("trust store %s is not valid JSON (%v); fix or remove it", s.Path, oneLine(err))
	}
	if f.Version != storeVersion {
		return nil, fmt.Errorf("trust store %s: unsupported version %d (this kosong-host reads version %d)", s.Path, f.Version, storeVersion)
	}
	for i, e := range f.Folders {
		if !filepath.IsAbs(e.Folder) || !strings.HasPrefix(e.Digest, digestPrefix) {
			return nil, fmt.Errorf("trust store %s: entry %d has no absolute folder or no %s digest; fix or remove it", s.Path, i+1, strings.TrimSuffix(digestPrefix, ":"))
		}
	}
	return &f, nil
}

// write replaces the store atomically: a temporary file of mode 0600 in
// the same folder, synced, then renamed over the store.
func (s *Store) write(f *file) error {
	f.Version = storeVersion
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	tmp, err := os.CreateTemp(dir, ".trust-*.json")
	if err != nil {
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; say so for umask-free clarity.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("trust store %s: %w", s.Path, err)
	}
	return nil
}

// oneLine is err's text on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
