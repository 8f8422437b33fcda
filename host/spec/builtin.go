package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Unpack writes the tree of fsys (the agents built into the binary) into a
// folder under cacheDir named for its contents, once, and returns that
// folder. The spec loader, the prompt renderer and the subagents then read
// the built-in agents as the files they are in the repository, and `extend:
// default` names DIR/default/agent.yaml wherever the binary runs. A folder
// left half-written by a crash is never used: the tree is written to a
// temporary folder and renamed into place.
func Unpack(fsys fs.FS, cacheDir string) (string, error) {
	h := sha256.New()
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		files = append(files, p)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("built-in agents: %w", err)
	}
	dir := filepath.Join(cacheDir, "agents-"+hex.EncodeToString(h.Sum(nil))[:16])
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("built-in agents: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".agents-*")
	if err != nil {
		return "", fmt.Errorf("built-in agents: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, p := range files {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return "", fmt.Errorf("built-in agents: %w", err)
		}
		out := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return "", fmt.Errorf("built-in agents: %w", err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return "", fmt.Errorf("built-in agents: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("built-in agents: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have unpacked the same tree meanwhile.
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return dir, nil
		}
		return "", fmt.Errorf("built-in agents: %w", err)
	}
	return dir, nil
}

// DefaultAgentFile is the spec of the built-in default agent in an unpacked
// tree of built-in agents.
func DefaultAgentFile(dir string) string {
	return filepath.Join(dir, path.Join("default", "agent.yaml"))
}
