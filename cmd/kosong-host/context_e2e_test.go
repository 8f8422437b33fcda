//go:build unix

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestTerminalClearStartsAListedSession: after /clear the new session is
// listed by `sessions` with its first prompt, and the exit hint names it,
// not the session from before /clear.
func TestTerminalClearStartsAListedSession(t *testing.T) {
	term := scriptedTerminal(t, "turns:\n  - text: First answer.\n  - text: Second answer.\n")
	term.Expect("/help for commands")
	term.Send("before clear\r")
	term.Expect("First answer.")
	term.Send("/clear\r")
	term.Expect("New session ")
	term.Send("after clear\r")
	term.Expect("Second answer.")
	term.Send("/sessions\r")
	term.Expect("after clear  (this session)")
	term.Expect("before clear")
	term.Exit()
	out := ansiCode.ReplaceAllString(term.Output(), "")
	i := strings.LastIndex(out, "kosong-host run --resume ")
	if i < 0 {
		t.Fatalf("no exit hint:\n%s", out)
	}
	hinted := strings.Fields(out[i+len("kosong-host run --resume "):])[0]

	r := runHostEnv(t, term.cmd.Dir, []string{"XDG_STATE_HOME=" + term.state}, "", "sessions", "--json")
	var rows []struct {
		ID          string `json:"id"`
		FirstPrompt string `json:"first_prompt"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("sessions --json: %v %+v", err, r)
	}
	prompts := map[string]string{}
	for _, row := range rows {
		prompts[row.ID] = row.FirstPrompt
	}
	if len(rows) != 2 || prompts[hinted] != "after clear" {
		t.Fatalf("exit hint names %s; sessions listed %+v (want two, the hinted one's first prompt \"after clear\")", hinted, rows)
	}
}

// TestAgentsMDFromParentFolders: the AGENTS.md files of the repository
// root, of the folders down to the work dir and of the user's config
// folder reach the system prompt; the one above the repository does not.
func TestAgentsMDFromParentFolders(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Read."}})
	root := writeFiles(t, map[string]string{
		"AGENTS.md":                   "ABOVE-THE-REPO",
		"repo/.git/HEAD":              "ref: refs/heads/main\n",
		"repo/AGENTS.md":              "FROM-REPO-ROOT",
		"repo/sub/.kosong/AGENTS.md":  "FROM-SUB-KOSONG",
		"repo/sub/work/s.md":          "System.\n${KOSONG_AGENTS_MD}\n",
		"repo/sub/work/agent.yaml":    "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\"]\n",
		"cfg/kosong-host/AGENTS.md":   "FROM-USER-CONFIG",
		"cfg/kosong-host/config.yaml": openaiConfig(srv, ""),
	})
	work := filepath.Join(root, "repo", "sub", "work")
	r := runHostEnv(t, work, []string{"XDG_CONFIG_HOME=" + filepath.Join(root, "cfg")}, "",
		"--agent", "agent.yaml", "run", "--model", "local", "-p", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Chat.Messages) == 0 || reqs[0].Chat.Messages[0].Role != "system" {
		t.Fatalf("%d requests", len(reqs))
	}
	system := reqs[0].Chat.Messages[0].Text()
	last := -1
	for _, want := range []string{"FROM-USER-CONFIG", "FROM-REPO-ROOT", "FROM-SUB-KOSONG"} {
		i := strings.Index(system, want)
		if i < 0 || i < last {
			t.Fatalf("%s missing or out of order in the system prompt:\n%s", want, system)
		}
		last = i
	}
	if strings.Contains(system, "ABOVE-THE-REPO") {
		t.Fatalf("an AGENTS.md above the repository root was read:\n%s", system)
	}
}

// contextTerminal runs the scripted provider on a terminal in a work dir
// holding files, with the user's config folder cfg.
func contextTerminal(t *testing.T, script string, files map[string]string, cfg string, extra ...string) *terminal {
	t.Helper()
	files["script.yaml"] = script
	work := writeFiles(t, files)
	args := append([]string{"--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run", "--provider", "scripted",
		"--script", "script.yaml"}, extra...)
	return startTerminal(t, work, []string{"XDG_CONFIG_HOME=" + cfg}, args...)
}

// TestTerminalCustomCommand: .kosong/commands/NAME.md and the user's
// commands/NAME.md become /NAME, listed by /help and completed by Tab;
// /NAME ARGS sends the file's text with $ARGUMENTS replaced.
func TestTerminalCustomCommand(t *testing.T) {
	cfg := writeFiles(t, map[string]string{"kosong-host/commands/greet.md": "Say hello to the user."})
	term := contextTerminal(t, "turns:\n  - text: Reviewed.\n  - text: Hello.\n", map[string]string{
		".kosong/commands/review.md": "---\ndescription: review a file closely\n---\nReview $ARGUMENTS closely.\n",
	}, cfg)
	term.Expect("/help for commands")
	term.Send("/help\r")
	term.Expect("/greet [ARGS]")
	term.Expect("Say hello to the user.")
	term.Expect("/review [ARGS]")
	term.Expect("review a file closely")
	term.Send("/revi\t")
	term.Expect("/review")
	term.Send(" main.go\r")
	term.Expect("Reviewed.")
	term.Send("/greet\r")
	term.Expect("Hello.")
	term.Exit()
	got := term.UserMessages()
	want := []string{"Review main.go closely.", "Say hello to the user."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the model was sent %q, want %q", got, want)
	}
}

// TestTerminalMentionsAndShell: @file attaches a file (Tab completes its
// name), @image an image for a model that takes images, @folder a listing
// without what .gitignore ignores; !command runs through the Shell tool's
// approval and its output reaches the model with the next prompt.
func TestTerminalMentionsAndShell(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Seen."}}, openaitest.Response{Text: []string{"Noted."}})
	cfg := writeFiles(t, map[string]string{"kosong-host/config.yaml": openaiConfig(srv, "image_in")})
	work := writeFiles(t, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "*.log\n",
		"notes.txt": "NOTES-CONTENT", "dot.png": string(pngDot), "sub/kept.txt": "", "sub/ignored.log": ""})
	term := startTerminal(t, work, []string{"XDG_CONFIG_HOME=" + cfg},
		"--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run", "--model", "local")
	term.Expect("/help for commands")
	term.Send("look at @no\t")
	term.Expect("@notes.txt")
	term.Send(" @dot.png and @sub/\r")
	term.Expect("attached @notes.txt")
	term.Expect("Seen.")
	term.Send("!echo shell-said-$((40+2))\r")
	term.Expect("[4] reject with feedback")
	term.Send("1")
	term.Expect("shell-said-42")
	term.Expect("with your next message")
	term.Send("and that?\r")
	term.Expect("Noted.")
	term.Exit()

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first := string(reqs[0].Body)
	for _, want := range []string{"look at @notes.txt @dot.png and @sub/", "NOTES-CONTENT",
		"data:image/png;base64,", "kept.txt"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "ignored.log") {
		t.Errorf("the listing shows a file .gitignore ignores:\n%s", first)
	}
	msgs := reqs[1].Chat.Messages
	last := msgs[len(msgs)-1]
	if last.Role != "user" || !strings.Contains(last.Text(), "and that?") || !strings.Contains(last.Text(), "shell-said-42") {
		t.Errorf("the second prompt lacks the command's output: %q", last.Text())
	}
}

// TestTerminalUndoRestoresFiles: /undo removes the last turn from the
// history and puts back the files its file tools edited: the edited one
// as it was, the created one removed; the turn before stays.
func TestTerminalUndoRestoresFiles(t *testing.T) {
	term := contextTerminal(t, `
turns:
  - text: First.
  - tool_calls:
      - {id: c1, name: WriteFile, arguments: {path: a.txt, content: "changed\n"}}
      - {id: c2, name: WriteFile, arguments: {path: sub/new.txt, content: "new\n"}}
  - tool_calls:
      - {id: c3, name: StrReplaceFile, arguments: {path: a.txt, edit: {old: changed, new: changed again}}}
  - text: Edited.
`, map[string]string{"a.txt": "original\n", "sub/keep.txt": ""}, t.TempDir(), "--yolo")
	work := term.cmd.Dir
	term.Expect("/help for commands")
	term.Send("hello\r")
	term.Expect("First.")
	term.Send("edit the files\r")
	term.Expect("Edited.")
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "changed again\n" {
		t.Fatalf("the turn did not edit a.txt: %q\n%s", b, term.Output())
	}
	term.Send("/undo\r")
	term.Expect(`Removed the turn of "edit the files" from the history; restored`)
	term.Exit()
	if b, err := os.ReadFile(filepath.Join(work, "a.txt")); err != nil || string(b) != "original\n" {
		t.Errorf("a.txt after /undo: %q, %v", b, err)
	}
	if fileExists(filepath.Join(work, "sub", "new.txt")) {
		t.Errorf("the file the turn created is still there")
	}
	if got := term.UserMessages(); strings.Join(got, "|") != "hello" {
		t.Errorf("saved user messages %q, want only hello", got)
	}
}
