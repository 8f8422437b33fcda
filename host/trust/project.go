package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/joho/godotenv"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/permission"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

// digestPrefix starts every digest.
const digestPrefix = "sha256:"

// DotEnvFile is the name of the folder's variables file.
const DotEnvFile = ".env"

// Project is what a folder's project files are and would run.
type Project struct {
	// Folder is the folder (as Folder returns it).
	Folder string
	// AgentFile is the folder's agent file, absolute; "" = none.
	AgentFile string
	// DotEnv is the folder's .env, absolute; "" = none.
	DotEnv string
	// Files are the files digested, absolute, sorted: the agent file, its
	// extend chain and subagent specs (the built-in default agent's files
	// left out), its lock file, the plugin binaries, MCP commands and files
	// named by hook commands and MCP arguments that lie inside the folder,
	// and .env.
	Files []string
	// Plugins are the plugins named by path, remote tool servers, and
	// plugins given key variables; Hooks are "EVENT: COMMAND"; MCPServers
	// are "NAME: COMMAND ARGS" or "NAME: URL"; Allow are the allow rules.
	Plugins, Hooks, MCPServers, Allow []string
	// DotEnvNames are the variables .env sets (names only, sorted).
	DotEnvNames []string
	// Problems say what could not be read (the agent file's error...):
	// the digest still covers the files as they are.
	Problems []string
	// Digest is the sha256 of the files' paths and contents.
	Digest string
}

// ScanOptions says where a folder's project files are.
type ScanOptions struct {
	// AgentFile is the folder's agent file (./.kosong/agent.yaml or
	// ./agent.yaml, relative to the folder or absolute); "" = none.
	AgentFile string
	// DefaultAgentPath is the built-in default agent (`extend: default`);
	// its folder's files are not the project's and are not digested.
	DefaultAgentPath string
}

// Empty reports whether the folder has no project files.
func (p *Project) Empty() bool { return p.AgentFile == "" && p.DotEnv == "" }

// Scan reads the project files of folder (as Folder returns it) and
// digests them. It executes nothing. A file it cannot read or parse is a
// Problem, not an error: the user is shown what is known.
func Scan(folder string, opts ScanOptions) *Project {
	p := &Project{Folder: folder}
	files := map[string]bool{}
	if opts.AgentFile != "" {
		p.AgentFile = opts.AgentFile
		if !filepath.IsAbs(p.AgentFile) {
			p.AgentFile = filepath.Join(folder, p.AgentFile)
		}
		files[p.AgentFile] = true
		p.scanAgent(files, opts.DefaultAgentPath)
	}
	if env := filepath.Join(folder, DotEnvFile); isFile(env) {
		p.DotEnv = env
		files[env] = true
		vars, err := godotenv.Read(env)
		if err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("%s cannot be read: %s", env, oneLine(err)))
		}
		for k := range vars {
			p.DotEnvNames = append(p.DotEnvNames, k)
		}
		sort.Strings(p.DotEnvNames)
	}
	p.Files = slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	})
	p.Digest = digest(p.Files)
	return p
}

// scanAgent adds the agent file's chain, subagents, lock file and what
// they run.
func (p *Project) scanAgent(files map[string]bool, defaultAgent string) {
	s, err := spec.Load(p.AgentFile, spec.LoadOptions{DefaultAgentPath: defaultAgent})
	if err != nil {
		p.Problems = append(p.Problems, "the agent file cannot be loaded: "+oneLine(err))
		return
	}
	if lock := pins.PathFor(s.Path); isFile(lock) {
		files[lock] = true
	}
	specs, err := agent.AgentFiles(s, defaultAgent)
	if err != nil {
		p.Problems = append(p.Problems, oneLine(err))
		specs = []*spec.Spec{s}
	}
	builtinDir := ""
	if defaultAgent != "" {
		builtinDir = filepath.Dir(defaultAgent)
	}
	seen := map[string]bool{}
	add := func(list *[]string, item string) {
		if !seen[item] {
			seen[item] = true
			*list = append(*list, item)
		}
	}
	for _, s := range specs {
		for _, f := range s.Files {
			if builtinDir == "" || !within(builtinDir, f) {
				files[f] = true
			}
		}
		for _, ref := range s.Tools {
			switch {
			case ref.Remote != nil:
				add(&p.Plugins, "remote tool server "+ref.Remote.Addr)
			case ref.Path != "":
				add(&p.Plugins, ref.Path)
				p.addInside(files, ref.Path)
			}
			if ref.AllowSecrets && len(ref.Env) > 0 {
				add(&p.Plugins, fmt.Sprintf("%s receives %s (allow_secrets)", ref.Plugin, strings.Join(ref.Env, ", ")))
			}
		}
		for _, h := range s.Hooks {
			add(&p.Hooks, h.Event+": "+h.Command)
			for _, w := range strings.Fields(h.Command) {
				p.addInside(files, p.resolve(strings.Trim(w, `"'`), ""))
			}
		}
		for _, m := range s.MCPServers {
			if m.Disabled {
				continue
			}
			if !m.Stdio() {
				add(&p.MCPServers, m.Name+": "+m.URL)
				continue
			}
			add(&p.MCPServers, strings.Join(append([]string{m.Name + ": " + m.Command}, m.Args...), " "))
			p.addInside(files, p.resolve(m.Command, m.Cwd))
			for _, a := range m.Args {
				p.addInside(files, p.resolve(a, m.Cwd))
			}
		}
		for _, r := range s.Permissions {
			if r.Effect == permission.Allow {
				add(&p.Allow, r.Text)
			}
		}
	}
}

// resolve is word as a path from base (the folder when ""); "" when
// word cannot be a path.
func (p *Project) resolve(word, base string) string {
	if word == "" || strings.HasPrefix(word, "-") {
		return ""
	}
	if filepath.IsAbs(word) {
		return word
	}
	if base == "" {
		base = p.Folder
	}
	return filepath.Join(base, word)
}

// addInside adds path to files when it is a regular file inside the
// folder (symbolic links resolved).
func (p *Project) addInside(files map[string]bool, path string) {
	if path == "" || !isFile(path) {
		return
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && within(p.Folder, real) {
		files[path] = true
		return
	}
	if within(p.Folder, path) {
		files[path] = true
	}
}

// within reports whether path lies in dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// digest hashes each file's path and content: a file that cannot be
// read hashes as its error's kind, so that it appearing changes the
// digest.
func digest(files []string) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\n", f, fileSum(f))
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil))
}

func fileSum(path string) string {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Describe writes what the project files are and would run, one item a
// line, paths inside the folder relative to it. Variable values are never
// shown.
func (p *Project) Describe(w io.Writer) {
	fmt.Fprintf(w, "  folder:      %s\n", p.Folder)
	rel := func(f string) string {
		if r, err := filepath.Rel(p.Folder, f); err == nil && within(p.Folder, f) {
			return r
		}
		return f
	}
	for _, f := range p.Files {
		fmt.Fprintf(w, "  file:        %s\n", rel(f))
	}
	for _, s := range p.Plugins {
		fmt.Fprintf(w, "  plugin:      %s\n", rel(s))
	}
	for _, s := range p.Hooks {
		fmt.Fprintf(w, "  hook:        %s\n", s)
	}
	for _, s := range p.MCPServers {
		fmt.Fprintf(w, "  MCP server:  %s\n", s)
	}
	for _, s := range p.Allow {
		fmt.Fprintf(w, "  allow rule:  %s\n", s)
	}
	if p.DotEnv != "" {
		names := strings.Join(p.DotEnvNames, ", ")
		if names == "" {
			names = "(no variables)"
		}
		fmt.Fprintf(w, "  .env sets:   %s\n", names)
	}
	for _, s := range p.Problems {
		fmt.Fprintf(w, "  note:        %s\n", s)
	}
}

// Ignored names the project files an untrusted folder's run leaves
// aside, for a one-line message: "./agent.yaml and .env". agentUsed
// false leaves the agent file out (the run does not use it anyway).
func (p *Project) Ignored(agentUsed bool) string {
	var parts []string
	if p.AgentFile != "" && agentUsed {
		r, err := filepath.Rel(p.Folder, p.AgentFile)
		if err != nil {
			r = p.AgentFile
		}
		parts = append(parts, "./"+filepath.ToSlash(r))
	}
	if p.DotEnv != "" {
		parts = append(parts, DotEnvFile)
	}
	return strings.Join(parts, " and ")
}
