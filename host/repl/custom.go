package repl

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/providers/config"
)

// Custom commands are Markdown files: .kosong/commands/NAME.md in the work
// dir and commands/NAME.md in the user's config folder
// ($XDG_CONFIG_HOME/kosong-host, else ~/.config/kosong-host) become
// /NAME; the work dir's win over the user's, the built-in commands over
// both. /NAME ARGS sends the file's text as the prompt with $ARGUMENTS
// replaced by ARGS (ARGS is added at the end when the text has no
// $ARGUMENTS). A file may start with a front matter block between "---"
// lines whose "description:" line is shown by /help; else /help shows
// the text's first line.

// MaxCustomCommand bounds a custom command's file.
const MaxCustomCommand = 64 << 10

// customCommand is one custom command file.
type customCommand struct {
	name, path, description string
}

var customName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

// customDirs are the folders of custom commands, the ones that win last.
func customDirs(workDir string) []string {
	var dirs []string
	if p := config.DefaultPath(os.Getenv); p != "" {
		dirs = append(dirs, filepath.Join(filepath.Dir(p), "commands"))
	}
	if workDir != "" {
		dirs = append(dirs, filepath.Join(workDir, ".kosong", "commands"))
	}
	return dirs
}

// customCommands reads the custom commands of workDir, sorted by name.
// Files that are not NAME.md with a usable NAME, or that shadow a
// built-in command, are left out.
func customCommands(workDir string) []customCommand {
	byName := map[string]customCommand{}
	for _, dir := range customDirs(workDir) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			base, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || !customName.MatchString(base) || isBuiltin("/"+base) {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			c := customCommand{name: "/" + base, path: path}
			if text, err := readCustom(path); err == nil {
				c.description = describe(text)
			}
			byName[c.name] = c
		}
	}
	out := make([]customCommand, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b customCommand) int { return strings.Compare(a.name, b.name) })
	return out
}

func isBuiltin(name string) bool {
	return slices.Contains(CommandNames(), name)
}

// readCustom reads a custom command file, refusing one over
// MaxCustomCommand.
func readCustom(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCustomCommand+1))
	if err != nil {
		return "", err
	}
	if len(data) > MaxCustomCommand {
		return "", fmt.Errorf("%s is over %d KiB", path, MaxCustomCommand>>10)
	}
	return string(data), nil
}

// frontMatter splits text into its front matter lines and its body.
func frontMatter(text string) (meta []string, body string) {
	rest, ok := strings.CutPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "---\n")
	if !ok {
		return nil, text
	}
	head, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil, text
	}
	body = strings.TrimPrefix(strings.TrimLeft(body, "-"), "\n")
	return strings.Split(head, "\n"), body
}

// describe is a custom command's line in /help.
func describe(text string) string {
	meta, body := frontMatter(text)
	for _, l := range meta {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "description" {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			return clipLine(l, 60)
		}
	}
	return ""
}

func clipLine(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// expandCustom is the prompt of custom command c with args.
func expandCustom(c customCommand, args string) (string, error) {
	text, err := readCustom(c.path)
	if err != nil {
		return "", fmt.Errorf("custom command %s: %w", c.name, err)
	}
	_, body := frontMatter(text)
	body = strings.TrimSpace(body)
	if strings.Contains(body, "$ARGUMENTS") {
		return strings.ReplaceAll(body, "$ARGUMENTS", args), nil
	}
	if args != "" {
		body += "\n\n" + args
	}
	return body, nil
}

// findCustom is the custom command name, if there is one.
func (r *REPL) findCustom(name string) (customCommand, bool) {
	for _, c := range customCommands(r.workDir()) {
		if c.name == name {
			return c, true
		}
	}
	return customCommand{}, false
}

// runCustom sends custom command c's prompt to the model.
func (r *REPL) runCustom(ctx context.Context, c customCommand, args string) {
	prompt, err := expandCustom(c, args)
	if err != nil {
		r.say("error: %v", err)
		return
	}
	if strings.TrimSpace(prompt) == "" {
		r.say("custom command %s (%s) is empty; nothing was sent to the model", c.name, c.path)
		return
	}
	r.turn(ctx, prompt)
}

// workDir is the folder of the conversation (the current directory when
// it has none).
func (r *REPL) workDir() string {
	if r.conv != nil {
		if d := r.conv.WorkDir(); d != "" {
			return d
		}
	}
	d, _ := os.Getwd()
	return d
}

// commandNames are the built-in and the custom commands.
func (r *REPL) commandNames() []string {
	names := CommandNames()
	for _, c := range customCommands(r.workDir()) {
		names = append(names, c.name)
	}
	return names
}

// helpCustom adds the custom commands to /help.
func (r *REPL) helpCustom(b *strings.Builder) {
	list := customCommands(r.workDir())
	if len(list) == 0 {
		return
	}
	b.WriteString("Custom commands (.kosong/commands/NAME.md, ~/.config/kosong-host/commands/NAME.md):\n")
	for _, c := range list {
		fmt.Fprintf(b, "  %-24s %s\n", c.name+" [ARGS]", c.description)
	}
}

// Complete lists the completions of the input typed up to the cursor: the
// slash commands, built-in and custom, for a first word starting with
// "/"; the paths for a word starting with "@" (see mention.go).
func (r *REPL) Complete(line string) []string {
	word := line[strings.LastIndexAny(line, " \t\n")+1:]
	switch {
	case strings.HasPrefix(word, "@"):
		return completePath(r.workDir(), word)
	case word == line && strings.HasPrefix(word, "/"):
		var out []string
		for _, n := range r.commandNames() {
			if strings.HasPrefix(n, word) {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}
