package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestInteractiveApprovals drives the interactive session through a pipe
// (-i) against the real Shell plugin: a call approved for the session, a
// second not asked again, then a rejection with feedback the model sees.
func TestInteractiveApprovals(t *testing.T) {
	work := writeFiles(t, map[string]string{"script.yaml": `
turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "echo first > one.txt"}}]
  - tool_calls: [{id: c2, name: Shell, arguments: {command: "echo second > two.txt"}}]
  - text: "Both ran."
  - tool_calls: [{id: c3, name: WriteFile, arguments: {path: three.txt, content: "x"}}]
  - text: "Understood, I will not write it."
`})
	input := strings.Join([]string{
		"run two commands",
		"2", // approve `run command` for the session; the second call is not asked
		"now write a file",
		"4", "use the scratch dir instead", // reject with feedback
		"exit",
	}, "\n") + "\n"
	r := runHostEnv(t, work, nil, input, "--agent", filepath.Join(testbin.Root(), "agent.yaml"),
		"run", "-i", "--provider", "scripted", "--script", "script.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout
	if n := strings.Count(out, "wants approval to run command"); n != 1 {
		t.Errorf("asked about `run command` %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{"Both ran.", "Understood, I will not write it.", "Rejected: use the scratch dir instead"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if !fileExists(filepath.Join(work, f)) {
			t.Errorf("%s was not written by the approved command", f)
		}
	}
	if fileExists(filepath.Join(work, "three.txt")) {
		t.Error("the rejected write happened")
	}
}
