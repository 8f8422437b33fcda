package command

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

// Command is the custom command as a Command: its Run sends the file's
// prompt as a turn.
func (c customCommand) Command() Command {
	return Command{Name: c.name, Args: "[ARGS]", Description: c.description, Run: func(ctx context.Context, e Env, arg string) {
		runCustom(ctx, e, c, arg)
	}}
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

// Custom are the custom commands of workDir, sorted by name. Files that
// are not NAME.md with a usable NAME, or that shadow a built-in command or
// one of reserved (a front end's own commands), are left out.
func Custom(workDir string, reserved ...string) []Command {
	var out []Command
	for _, c := range customs(workDir, reserved) {
		out = append(out, c.Command())
	}
	return out
}

// customs reads the custom command files of workDir.
func customs(workDir string, reserved []string) []customCommand {
	byName := map[string]customCommand{}
	for _, dir := range customDirs(workDir) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			base, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || !customName.MatchString(base) || isBuiltin("/"+base, reserved) {
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

func isBuiltin(name string, reserved []string) bool {
	if slices.Contains(reserved, name) {
		return true
	}
	for _, c := range Builtins() {
		if c.Name == name {
			return true
		}
	}
	return false
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

// runCustom sends custom command c's prompt as a turn.
func runCustom(ctx context.Context, e Env, c customCommand, args string) {
	prompt, err := expandCustom(c, args)
	if err != nil {
		e.say("error: %v", err)
		return
	}
	if strings.TrimSpace(prompt) == "" {
		e.say("custom command %s (%s) is empty; nothing was sent to the model", c.name, c.path)
		return
	}
	_ = e.Turn(ctx, prompt) // the front end shows the turn's errors
}
