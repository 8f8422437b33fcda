// Package spec loads agent spec files (agent.yaml).
//
// An agent spec names an agent, its system prompt, the tools it may use (as references to
// out-of-process tool plugins), its subagents and its default model. A spec may extend another
// one (`extend: ./base.yaml` or `extend: default`); fields the child sets replace the base's,
// except system_prompt_args, which are merged key by key (mcp_servers too is replaced whole).
//
// The format mirrors Kimi CLI's agent spec. Differences: tools are `PLUGIN:Tool` references
// (or mappings with plugin settings) instead of Python `module:Class` paths, unknown keys are
// errors, `allowed_tools`, `model` and `mcp_servers` (see MCPServer) exist, and exclude_tools
// also matches bare tool names.
//
// Which tools are loaded: allowed_tools if set, else tools; then exclude_tools removes
// entries. An exclude_tools entry
//   - "PLUGIN:Tool" removes Tool from the references to that plugin (a path PLUGIN is
//     resolved against its own file, so it matches however the base wrote the same path);
//   - "PLUGIN" containing a slash removes every reference to the plugin at that path;
//   - a bare word W removes every reference to the plugin named W (Kimi's exact match of
//     the reference "W") and also the tool named W from every other reference.
//
// Removing a tool from a reference that lists tools shortens the list (and drops the
// reference once empty); from a reference to every tool of a plugin it is recorded in
// ToolRef.Exclude, for the loader to apply once it knows the plugin's tools. An entry that
// matches nothing is not an error.
//
// A field is "set" when its key is present. As in Kimi, `tools:`, `allowed_tools:`,
// `exclude_tools:` and `subagents:` with no value are set to nothing, and `extend:` with
// no value means no base; other fields must have a value.
//
// Every error returned by this package is a *Error, and its text is one line.
package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/permission"
)

// SupportedVersion is the only agent spec version accepted. A file without `version` is
// taken to be of this version.
const SupportedVersion = "1"

// DefaultExtend is the `extend` value naming the built-in default agent
// (see LoadOptions.DefaultAgentPath). To extend a file named "default", write "./default".
const DefaultExtend = "default"

// LoadOptions configures Load.
type LoadOptions struct {
	// DefaultAgentPath is the file `extend: default` refers to (the built-in default agent).
	// If empty, `extend: default` is an error. A relative path is taken from the current
	// directory.
	DefaultAgentPath string
}

// Spec is a fully resolved agent spec: extends followed, relative paths made absolute,
// allowed_tools and exclude_tools applied, required fields checked.
type Spec struct {
	// Path is the absolute path of the file loaded.
	Path string
	// Files is the extend chain: Path first, then the file it extends, and so on.
	Files []string
	// Name is the agent name (never empty).
	Name string
	// SystemPromptPath is the absolute path of the system prompt template (never empty).
	SystemPromptPath string
	// SystemPromptArgs are the template arguments, merged along the extend chain
	// (the child's value wins). Never nil.
	SystemPromptArgs map[string]string
	// Tools are the tool references to load: allowed_tools if set, else tools, with
	// exclude_tools applied. Use Plugins to group them into plugin loads.
	Tools []ToolRef
	// Subagents are the agents the subagent tool may start, by name. Never nil.
	Subagents map[string]Subagent
	// Model is the default model alias ("" = not set).
	Model string
	// MCPServers are the MCP servers whose tools the agent also gets (`mcp_servers`), in
	// file order. Never nil.
	MCPServers []MCPServer
	// Sandbox confines every plugin whose references set no sandbox of
	// their own (`sandbox`); nil = none.
	Sandbox *Sandbox
	// Hooks are the agent's hooks (`hooks`), in file order.
	Hooks []hooks.Hook
	// Permissions are the agent's permission rules (`permissions`), each
	// with its list, file and line.
	Permissions []permission.Rule
}

// Subagent is one entry of `subagents`.
type Subagent struct {
	// Path is the absolute path of the subagent's spec file (resolved against the folder of
	// the file that declared it; not checked for existence here).
	Path string
	// Description tells the model what the subagent is for.
	Description string
}

// Error is an error in an agent spec. Its text is one line:
// "FILE:LINE: MSG", "FILE: MSG" or "MSG" depending on what is known.
type Error struct {
	// File is the absolute path of the file at fault, or "" if the message names it
	// itself (or there is no single file).
	File string
	// Line is the 1-based line in File, or 0 if unknown.
	Line int
	// Msg is the message, without the location.
	Msg string
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
	case e.File != "":
		return e.File + ": " + e.Msg
	default:
		return e.Msg
	}
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' }), "; ")
}

// Load reads the agent spec at path, follows its extend chain and returns the resolved spec.
//
// Relative paths inside a file (extend, system_prompt_path, subagent paths, plugin paths in
// tool references) are relative to the folder of that file. File paths in messages are
// absolute.
func Load(path string, opts LoadOptions) (*Spec, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{Msg: oneLine(fmt.Sprintf("Agent spec file not found: %s: %v", path, err))}
	}
	l := &loader{opts: opts}
	f, files, err := l.resolve(abs, nil)
	if err != nil {
		return nil, err
	}
	return finish(abs, files, f)
}

// frame is one file on the extend stack.
type frame struct {
	path string // absolute path, for messages
	key  string // identity (symlinks resolved), for cycle detection
	line int    // line of its `extend` key
}

type loader struct {
	opts LoadOptions
}

// resolve loads path and everything it extends, returning the merged raw spec and the chain
// of files (path first). stack holds the files that extend this one, outermost first.
func (l *loader) resolve(path string, stack []frame) (*file, []string, error) {
	data, key, err := readSpecFile(path)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.File == "" && len(stack) > 0 {
			// A missing base: point at the `extend` that names it.
			parent := stack[len(stack)-1]
			e.File, e.Line = parent.path, parent.line
		}
		return nil, nil, err
	}
	for i, fr := range stack {
		if fr.key == key {
			chain := make([]string, 0, len(stack)-i+1)
			for _, g := range stack[i:] {
				chain = append(chain, g.path)
			}
			chain = append(chain, path)
			return nil, nil, &Error{Msg: "agent spec extend cycle: " + strings.Join(chain, " -> ")}
		}
	}
	f, err := parseFile(path, data)
	if err != nil {
		return nil, nil, err
	}
	if !f.extend.set {
		return f, []string{path}, nil
	}
	var base string
	if f.extend.v == DefaultExtend {
		if l.opts.DefaultAgentPath == "" {
			return nil, nil, &Error{File: path, Line: f.extend.line,
				Msg: "extend: default: no default agent is configured"}
		}
		base, err = filepath.Abs(l.opts.DefaultAgentPath)
		if err != nil {
			return nil, nil, &Error{File: path, Line: f.extend.line, Msg: oneLine("extend: default: " + err.Error())}
		}
	} else {
		base = f.abs(f.extend.v)
	}
	b, files, err := l.resolve(base, append(stack, frame{path: path, key: key, line: f.extend.line}))
	if err != nil {
		return nil, nil, err
	}
	return merge(b, f), append([]string{path}, files...), nil
}

// readSpecFile reads an agent spec file and returns its contents and its identity
// (the path with symlinks resolved).
func readSpecFile(path string) ([]byte, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", &Error{Msg: "Agent spec file not found: " + path}
		}
		return nil, "", &Error{Msg: oneLine("Cannot read agent spec file: " + err.Error())}
	}
	if !st.Mode().IsRegular() {
		return nil, "", &Error{Msg: "Agent spec path is not a file: " + path}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", &Error{Msg: oneLine("Cannot read agent spec file: " + err.Error())}
	}
	key, err := filepath.EvalSymlinks(path)
	if err != nil {
		key = path
	}
	return data, key, nil
}

// decodeYAML parses data as a single YAML document.
func decodeYAML(path string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "Invalid YAML format in agent spec file: " + path}
		}
		return nil, &Error{Msg: oneLine("Invalid YAML in agent spec file: " + path + ": " + err.Error())}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		msg := "expected a single YAML document"
		if err != nil {
			msg = err.Error()
		}
		return nil, &Error{Msg: oneLine("Invalid YAML in agent spec file: " + path + ": " + msg)}
	}
	return &doc, nil
}

// merge lays child over base: every field the child sets replaces the base's, except
// system_prompt_args, which are merged key by key.
func merge(base, child *file) *file {
	m := *base
	m.path, m.dir = child.path, child.dir
	m.extend = opt[string]{}
	m.name.over(child.name)
	m.systemPromptPath.over(child.systemPromptPath)
	args := make(map[string]string, len(base.systemPromptArgs)+len(child.systemPromptArgs))
	for k, v := range base.systemPromptArgs {
		args[k] = v
	}
	for k, v := range child.systemPromptArgs {
		args[k] = v
	}
	m.systemPromptArgs = args
	m.tools.over(child.tools)
	m.allowedTools.over(child.allowedTools)
	m.excludeTools.over(child.excludeTools)
	m.subagents.over(child.subagents)
	m.model.over(child.model)
	m.mcpServers.over(child.mcpServers)
	m.sandbox.over(child.sandbox)
	m.hooks.over(child.hooks)
	m.permissions.over(child.permissions)
	return &m
}

// finish checks the required fields and builds the Spec.
func finish(path string, files []string, f *file) (*Spec, error) {
	if !f.name.set || f.name.v == "" {
		return nil, &Error{File: path, Msg: "Agent name is required"}
	}
	if !f.systemPromptPath.set {
		return nil, &Error{File: path, Msg: "System prompt path is required"}
	}
	if !f.tools.set {
		return nil, &Error{File: path, Msg: "Tools are required"}
	}
	refs := f.tools.v
	if f.allowedTools.set {
		refs = f.allowedTools.v
	}
	if err := checkTypos(path, f.tools.v, f.allowedTools.v, f.allowedTools.set, f.excludeTools.v); err != nil {
		return nil, err
	}
	s := &Spec{
		Path:             path,
		Files:            files,
		Name:             f.name.v,
		SystemPromptPath: f.systemPromptPath.v,
		SystemPromptArgs: f.systemPromptArgs,
		Tools:            applyExcludes(refs, f.excludeTools.v),
		Subagents:        f.subagents.v,
		Model:            f.model.v,
		MCPServers:       f.mcpServers.v,
		Sandbox:          f.sandbox.v,
		Hooks:            f.hooks.v,
		Permissions:      f.permissions.v,
	}

	if s.SystemPromptArgs == nil {
		s.SystemPromptArgs = map[string]string{}
	}
	if s.Subagents == nil {
		s.Subagents = map[string]Subagent{}
	}
	if s.MCPServers == nil {
		s.MCPServers = []MCPServer{}
	}
	return s, nil
}
