package permission

import (
	"encoding/json"
	"strings"
	"testing"
)

func shellArgs(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

// TestAllowEveryCommand: an allow rule approves a command only when every
// simple command in it, nested ones included, matches an allow rule, none
// writes to a file unless the rule has the redirection, and the parser can
// prove it.
func TestAllowEveryCommand(t *testing.T) {
	s := set(t, t.TempDir(), map[Effect][]string{Allow: {"Shell(ls *)", "Shell(git status*)", "Shell(git diff*)",
		"Shell(echo *)", "Shell(cat *)", "Shell(make * > build.log)"}})
	for _, tc := range []struct {
		cmd  string
		want Effect
		why  string // in the reason
	}{
		{"ls -la", Allow, `allow rule "Shell(ls *)"`},
		{`\ls -la`, Allow, ""},
		{`ls 'a b' "c"`, Allow, ""},
		{"git status && git diff", Allow, "`git diff` by \"Shell(git diff*)\""},
		{"git status 2>&1", Allow, ""},
		{"git status >/dev/null 2>&1", Allow, ""},
		{"git status >&2", Allow, ""},
		{"git status 2>&-", Allow, ""},
		{"cat < in.txt", Allow, ""},
		{"cat <<< hi", Allow, ""},
		{"cat <<'EOF'\n$(touch X)\nEOF", Allow, ""}, // quoted here-document: no expansion
		{"echo $((1 + 0x2)) $#", Allow, ""},
		{"make all > build.log", Allow, `"Shell(make * > build.log)"`},

		// Nested commands must be allowed too.
		{`ls "$(touch X)"`, None, "`touch X` (in $( )): no allow rule matches"},
		{"ls `touch X`", None, "`touch X` (in ` `)"},
		{"git status <(touch X)", None, "`touch X` (in <( ))"},
		{"git status >(touch X)", None, "`touch X` (in >( ))"},
		{"cat <<EOF\n$(touch X)\nEOF", None, "in a here-document"},
		{`echo "${X:-$(touch X)}"`, None, "`touch X`"},
		{"ls; touch X", None, "`touch X`"},
		{"ls && touch X", None, "`touch X`"},
		{"ls | touch X", None, "`touch X`"},
		{"ls & touch X", None, "`touch X`"},
		{"(touch X)", None, "`touch X`"},
		{"{ touch X; }", None, "`touch X`"},
		{"f() { touch X; }; ls", None, "`touch X`"},
		{"ls() { touch X; }; ls", None, "`touch X`"},
		{"if ls; then touch X; fi", None, "`touch X`"},
		{"for f in a; do touch $f; done", None, "`touch $f`"},
		{"X=1 ls", None, "`X=1 ls`"},
		{"X=$(touch X)", None, "`X=$(touch X)`"},
		{"git status && git push", None, "`git push`"},
		{"eval ls", None, "`eval ls`"},
		{"sh -c ls", None, "`sh -c ls`"},

		// Redirections to files.
		{"git status > F", None, "redirection to a file: > F"},
		{"git status >> F", None, "redirection to a file: >> F"},
		{"git status 2> F", None, "redirection to a file: 2> F"},
		{"git status &> F", None, "redirection to a file: &> F"},
		{"git status &>> F", None, "redirection to a file: &>> F"},
		{"git status >| F", None, "redirection to a file: >| F"},
		{"git status <> F", None, "redirection to a file: <> F"},
		{"git status >& F", None, "redirection to a file: >& F"},
		{"git status > $F", None, "redirection to a file: > $F"},
		{"> F", None, "redirection to a file: > F"},
		{"(ls) > F", None, "redirection to a file: > F"},
		{"make all > other.log", None, "redirection to a file: > other.log"},
		{"ls > build.log", None, "redirection to a file"},

		// What the parser cannot prove.
		{"$X -la", None, "cannot prove it safe: dynamic command name: $X -la"},
		{`ls "`, None, "cannot prove it safe: cannot parse"},
		{"echo $((i+1))", None, "arithmetic on a value"},
		{"echo ${a[i]}", None, "arithmetic on a value"},
		{"echo ${!x}", None, "indirect expansion"},
		{"echo ${x@P}", None, "prompt expansion"},
		{"ls *(e:x:)", None, "extended glob"},
		{"ls (x)", None, "cannot parse"},
		{"ls $~x", None, "zsh expansion: $~x"},
		{"ls =(touch X)", None, "cannot parse"},
		{"", None, "no command"},
	} {
		d := s.Decide(shell, shellArgs(tc.cmd))
		if d.Effect != tc.want || !strings.Contains(d.Reason, tc.why) {
			t.Errorf("%q: %s (%s), want %s with %q", tc.cmd, d.Effect, d.Reason, tc.want, tc.why)
		}
	}
}

// TestDenyResolved: a deny rule matches the command however it is written:
// paths, quotes and escapes, wrappers, shell bodies, nested commands.
func TestDenyResolved(t *testing.T) {
	s := set(t, t.TempDir(), map[Effect][]string{
		Deny:  {"Shell(rm *)", "Shell(git push --force*)"},
		Allow: {"Shell(*)"},
	})
	for _, cmd := range []string{
		"rm -f x", "/bin/rm -f x", "./rm x", "../bin/rm x", "~/bin/rm x", `\rm -f x`, `r""m x`, `"rm" x`, `'rm' x`, `$'rm' x`, `$'\x72m' x`,
		"command rm -f x", "command -p rm x", "builtin rm x", "exec rm x", "exec -a foo rm x", "env rm x", "env -i FOO=1 BAR=2 rm x",
		"env -u HOME -- rm x", "nohup rm x", "nice -n 5 rm x", "nice -5 rm x", "timeout 5 rm x", "timeout -s KILL 5 rm x",
		"sudo rm x", "sudo -u root -E rm x", "sudo --user=root rm x", "doas -u root rm x", "stdbuf -oL rm x", "setsid -f rm x",
		"busybox rm x", "xargs rm < list", "ls | xargs -0 -n 1 rm", "command env FOO=1 nohup /usr/bin/rm x",
		`sh -c "rm x"`, "bash -c 'rm x'", "zsh -c 'rm x'", "dash -c 'rm x'", "bash -lc 'rm x'", "bash -e -o pipefail -c 'rm x'",
		"bash --norc -c 'rm x'", `sh -c "sh -c 'rm x'"`, "sudo sh -c 'rm x'", "env bash -c 'rm x' name",
		`eval "rm x"`, "eval rm x", `trap "rm x" EXIT`, "trap -- 'rm x' EXIT", "alias x='rm -rf'",
		"echo $(rm x)", "echo `rm x`", `echo "$(rm x)"`, "cat <(rm x)", "f() { rm x; }; f", "(rm x)", "{ rm x; }",
		"true && rm x", "false || rm x", "echo | rm x", "if true; then rm x; fi", "while rm x; do :; done",
		"for f in a; do rm $f; done", "case a in a) rm x;; esac", "time rm x", "! rm x", "rm x &", "coproc rm x",
		"echo ${x:-$(rm x)}", "cat <<EOF\n$(rm x)\nEOF", "X=1 rm x", "git push --force origin", "git push --force",
	} {
		d := s.Decide(shell, shellArgs(cmd))
		if d.Effect != Deny || d.Unproven != "" {
			t.Errorf("%q: %s (%s), want a deny rule to match", cmd, d.Effect, d.Reason)
		}
	}
	for _, cmd := range []string{"rmdir x", "echo rm x", "command -v rm", "command -V rm", "git push origin", "ls -la", "farm x",
		"bash script.sh", "sudo -l", "printf '%s' rm", "echo 'rm x'"} {
		if d := s.Decide(shell, shellArgs(cmd)); d.Effect != Allow {
			t.Errorf("%q: %s (%s), want allowed by Shell(*)", cmd, d.Effect, d.Reason)
		}
	}
}

// TestDenyUnproven: when a tool has deny rules, a command the parser cannot
// resolve is denied (it might be a denied one); with ask rules only, asked.
func TestDenyUnproven(t *testing.T) {
	deny := set(t, t.TempDir(), map[Effect][]string{Deny: {"Shell(rm *)"}, Allow: {"Shell(*)"}})
	ask := set(t, t.TempDir(), map[Effect][]string{Ask: {"Shell(rm *)"}, Allow: {"Shell(*)"}})
	for _, tc := range []struct{ cmd, why string }{
		{"$X x", "dynamic command name: $X x"},
		{"${X} x", "dynamic command name"},
		{"$(echo rm) x", "dynamic command name"},
		{"/bin/r? x", "dynamic command name"},
		{"/bin/[r]m x", "dynamic command name"},
		{"{rm,x}", "dynamic command name"},
		{"=rm x", "dynamic command name"},
		{`eval "$Y"`, "eval of a dynamic string"},
		{`sh -c "$Y"`, "sh -c with a dynamic body"},
		{"bash -c", "bash -c without a body"},
		{"echo rm x | sh", "a shell reading commands from its input: sh"},
		{"bash -s < script", "a shell reading commands from its input"},
		{"bash <(echo rm x)", "a shell reading commands from its input"},
		{"sh /dev/stdin <<< 'rm x'", "a shell reading commands from its input"},
		{"source <(echo rm x)", "source of its input"},
		{". /dev/stdin <<< 'rm x'", ". of its input"},
		{"sudo -s", "a shell reading commands from its input"},
		{"env -S 'rm x'", "unknown option of env: -S"},
		{"sudo --bogus rm x", "unknown option of sudo"},
		{"command $X x", "dynamic command name"},
		{`trap "$Y" EXIT`, "trap of a dynamic string"},
		{"x='a[$(rm y)]'; echo $((x))", "arithmetic on a value"},
		{"[[ $x -eq 1 ]]", "arithmetic on a value"},
		{"unset 'a[$(rm y)]'", "a variable name"},
		{"read 'a[$(rm y)]'", "a variable name"},
		{"printf -v 'a[$(rm y)]' 1", "a variable name"},
		{"declare \"$x\"", "a variable name"},
		{"mapfile -C 'rm y' -c 1 a < f", "mapfile -C runs a string as code"},
		{`sh -c "sh -c \"sh -c 'sh -c \\\"rm x\\\"'\""`, "nested more than 3 deep"},
		{"rm x '", "cannot parse"},
		{strings.Repeat("a", maxCommandBytes+1), "longer than 64 KiB"},
	} {
		d := deny.Decide(shell, shellArgs(tc.cmd))
		if d.Effect != Deny || !strings.Contains(d.Unproven, tc.why) ||
			!strings.HasPrefix(d.Reason, `cannot check the command against deny rule "Shell(rm *)"`) {
			t.Errorf("deny %q: %s %q (%s), want deny for %q", tc.cmd, d.Effect, d.Unproven, d.Reason, tc.why)
		}
		if r := DeniedResult(d); !strings.Contains(r.Message, "cannot be checked against the rule `Shell(rm *)`") {
			t.Errorf("deny %q: the model sees %q", tc.cmd, r.Message)
		}
		if d := ask.Decide(shell, shellArgs(tc.cmd)); d.Effect != Ask || !strings.Contains(d.Unproven, tc.why) {
			t.Errorf("ask %q: %s %q (%s), want ask for %q", tc.cmd, d.Effect, d.Unproven, d.Reason, tc.why)
		}
	}
	// A bare deny (every call) and rules of other tools do not make a
	// command unproven for this one.
	other := set(t, t.TempDir(), map[Effect][]string{Deny: {"ReadFile(./secrets/**)"}, Allow: {"Shell(*)"}})
	if d := other.Decide(shell, shellArgs("$X")); d.Effect != Allow {
		t.Errorf("deny rule of another tool: %s (%s)", d.Effect, d.Reason)
	}
}

// TestDenyReasonNamesThePart: the reason names the simple command and its
// form, for permissions check.
func TestDenyReasonNamesThePart(t *testing.T) {
	s := set(t, t.TempDir(), map[Effect][]string{Deny: {"Shell(rm *)"}})
	for _, tc := range []struct{ cmd, want string }{
		{"/bin/rm -f x", "deny rule \"Shell(rm *)\" (" + s.Deny[0].Where() + ") matches `rm -f x`, written `/bin/rm -f x`"},
		{`ls && sh -c "rm x"`, "matches `rm x` (in sh -c)"},
		{"echo $(rm x)", "matches `rm x` (in $( ))"},
		{"rm x", "matches `rm x`"},
	} {
		if d := s.Decide(shell, shellArgs(tc.cmd)); d.Effect != Deny || !strings.Contains(d.Reason, tc.want) {
			t.Errorf("%q: %s %q, want %q", tc.cmd, d.Effect, d.Reason, tc.want)
		}
	}
}

// TestParts: Decide lists each simple command and the rule that allowed it
// or why none did.
func TestParts(t *testing.T) {
	s := set(t, t.TempDir(), map[Effect][]string{Allow: {"Shell(ls *)"}})
	d := s.Decide(shell, shellArgs(`ls "$(touch X)" > out`))
	want := []Part{
		{Command: `ls "$(touch X)" > out`, Note: "redirection to a file: > out (an allow rule allows one only when its pattern has the redirection)"},
		{Command: "touch X", Context: "in $( )", Note: "no allow rule matches"},
	}
	if len(d.Parts) != len(want) {
		t.Fatalf("parts %+v", d.Parts)
	}
	for i := range want {
		if d.Parts[i] != want[i] {
			t.Errorf("part %d: %+v, want %+v", i, d.Parts[i], want[i])
		}
	}
	d = s.Decide(shell, shellArgs("ls a | ls b"))
	if d.Effect != Allow || len(d.Parts) != 2 || d.Parts[0].Rule != "Shell(ls *)" || d.Parts[1].Rule != "Shell(ls *)" {
		t.Errorf("parts %+v", d.Parts)
	}
}

// TestParseCommandForms: the forms of a simple command the rules match.
func TestParseCommandForms(t *testing.T) {
	for _, tc := range []struct {
		cmd                     string
		words, literal, resolve string
		writes                  string
	}{
		{`/bin/rm  -f "a b"`, `/bin/rm -f "a b"`, `/bin/rm -f 'a b'`, `rm -f 'a b'`, ""},
		{`\rm x`, `\rm x`, "rm x", "rm x", ""},
		{"X=1 env Y=2 ls $D", "X=1 env Y=2 ls $D", "X=1 env Y=2 ls $D", "env Y=2 ls $D|ls $D", ""},
		{"git status 2>&1 > out 2>>err <in {fd}>x", "git status", "git status", "git status", "> out|2>> err|{fd}> x"},
		{"cat > /dev/null 2>/dev/stderr", "cat", "cat", "cat", ""},
		{"echo ''", "echo ''", "echo ''", "echo ''", ""},
	} {
		c := ParseCommand(tc.cmd)
		if len(c.Simple) != 1 || len(c.Unproven) != 0 {
			t.Errorf("%q: %+v", tc.cmd, c)
			continue
		}
		sc := c.Simple[0]
		if sc.Words != tc.words || sc.Literal != tc.literal || strings.Join(sc.Resolved, "|") != tc.resolve || strings.Join(sc.Writes, "|") != tc.writes {
			t.Errorf("%q: %+v, want words %q literal %q resolved %q writes %q", tc.cmd, sc, tc.words, tc.literal, tc.resolve, tc.writes)
		}
	}
}
