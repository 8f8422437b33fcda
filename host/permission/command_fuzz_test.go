package permission

import (
	"strings"
	"testing"
	"time"
)

var commandSeeds = []string{
	"ls -la", `ls "$(touch X)"`, "git status <(touch X) > F", "/bin/rm -f x", `\rm x`, "command rm x",
	`sh -c "bash -c 'eval rm x'"`, "cat <<EOF\n$(touch X)\nEOF", "echo $((a[$(x)]))", "f() { rm x; }; f",
	"for ((i=0;i<3;i++)); do echo $i; done", "case $x in a|b) ls;; esac", `echo ${x:-$(y)} ${!p} ${a[@]:1:2}`,
	"sudo -u root env -i A=1 timeout 5 nice -n 1 xargs -0 rm", "trap 'rm x' EXIT; alias a='rm'", "`", "$(", "<<", "${",
	"coproc x { ls; }", "[[ -v a[1] && $x =~ y ]]", "let i=1+2", "declare -A m=([k]=v)", "exec 3<>f 2>&1 >&-",
}

// FuzzParseCommand: any command parses without a panic or a hang, and an
// allow rule never approves what the parser could not prove or a
// redirection to a file.
func FuzzParseCommand(f *testing.F) {
	for _, s := range commandSeeds {
		f.Add(s)
	}
	rules := &Set{}
	for _, text := range []string{"Shell(ls *)", "Shell(echo *)", "Shell(git *)", "Shell(rm *)"} {
		r, err := ParseRule(text, Allow)
		if err != nil {
			f.Fatal(err)
		}
		rules.Add(r)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		args := shellArgs(cmd) // JSON: invalid UTF-8 becomes U+FFFD
		c := ParseCommand(argument(shell, args))
		d := rules.Decide(shell, args)
		if d.Effect != Allow {
			return
		}
		if len(c.Unproven) > 0 || len(c.Writes) > 0 {
			t.Fatalf("%q allowed with %+v", cmd, c)
		}
		for _, sc := range c.Simple {
			if len(sc.Writes) > 0 {
				t.Fatalf("%q allowed with a write: %+v", cmd, sc)
			}
		}
	})
}

// TestParseCommandBounded: large and deeply nested input finishes quickly.
func TestParseCommandBounded(t *testing.T) {
	for _, cmd := range []string{
		strings.Repeat("$(", 20000) + strings.Repeat(")", 20000),
		strings.Repeat(`sh -c "`, 2000),
		strings.Repeat("ls | ", 10000) + "ls",
		strings.Repeat("a", 1<<20),
		strings.Repeat("((", 10000),
		strings.Repeat("(", 20000) + strings.Repeat(")", 20000),
		strings.Repeat("(( ", 120) + "1" + strings.Repeat(" ))", 120),
		strings.Repeat("eval ", 10000) + "rm x",
	} {
		done := make(chan Command, 1)
		go func() { done <- ParseCommand(cmd) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("ParseCommand of %d bytes (%.20q...) did not finish in 30s", len(cmd), cmd)
		}
	}
}
