package repl

import (
	"fmt"
	"os"
	"strings"

	hostcommand "github.com/kosong-host/kosong-host/host/command"
)

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
	for _, c := range hostcommand.Custom(r.workDir(), terminalNames()...) {
		names = append(names, c.Name)
	}
	return names
}

// helpCustom adds the custom commands to /help.
func (r *REPL) helpCustom(b *strings.Builder) {
	list := hostcommand.Custom(r.workDir(), terminalNames()...)
	if len(list) == 0 {
		return
	}
	b.WriteString("Custom commands (.kosong/commands/NAME.md, ~/.config/kosong-host/commands/NAME.md):\n")
	for _, c := range list {
		fmt.Fprintf(b, "  %-24s %s\n", c.Name+" "+c.Args, c.Description)
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
