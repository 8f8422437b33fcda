package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

func TestPolicyRoundTrip(t *testing.T) {
	p := Policy{Plugin: "file", Read: []string{"/"}, Write: []string{"/w", "/tmp"}, Network: Network{Ports: []uint16{443}}, Required: true}
	got, err := Unmarshal(p.Marshal())
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	exe, args := Command("/bin/host", p, "/bin/plugin", []string{"plugin-serve", "file"})
	want := []string{ExecCommand, "--rules", p.Marshal(), "--", "/bin/plugin", "plugin-serve", "file"}
	if exe != "/bin/host" || !reflect.DeepEqual(args, want) {
		t.Errorf("Command = %s %q", exe, args)
	}
	if d := p.Describe(); d != "the sandbox of plugin file (writable: /w, /tmp; network: ports 443)" {
		t.Errorf("Describe = %q", d)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`nope`, "sandbox rules: invalid character"},
		{`{"plugin":"x","writable":["/"]}`, `unknown field "writable"`},
		{`{"read":["/"]}`, "no plugin name"},
		{`{"plugin":"x","write":["tmp"]}`, `"tmp" is not an absolute path`},
	} {
		if _, err := Unmarshal(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Unmarshal(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestNetworkString(t *testing.T) {
	for n, want := range map[*Network]string{{All: true}: "all", {}: "none", {Ports: []uint16{80, 443}}: "ports 80, 443"} {
		if got := n.String(); got != want {
			t.Errorf("%+v = %q, want %q", *n, got, want)
		}
	}
}

func TestDecide(t *testing.T) {
	none, all := Network{}, Network{All: true}
	for _, tc := range []struct {
		name     string
		abi      int
		net      Network
		required bool
		confine  bool
		warn     string
		err      string
	}{
		{"landlock with network rules", 7, none, true, true, "", ""},
		{"no landlock, required", 0, all, true, false, "", "sandbox required but this kernel has no Landlock"},
		{"no landlock", 0, all, false, false, "this kernel has no Landlock: plugins run unconfined", ""},
		{"no network rules, required", 3, none, true, false, "", "has no network rules (ABI 4+)"},
		{"no network rules", 3, none, false, true, "plugins' network is unconfined", ""},
		{"no network rules needed, no scopes, required", 5, all, true, false, "", "sandbox required but this kernel's Landlock (ABI 5) has no IPC scopes (ABI 6+): refusing to run it less confined"},
		{"no scopes", 5, none, false, true, "plugins may signal processes and reach abstract unix sockets outside their sandbox", ""},
		{"neither network rules nor scopes, required", 3, none, true, false, "", "has no network rules (ABI 4+) and this kernel's Landlock (ABI 3) has no IPC scopes (ABI 6+)"},
		{"scopes", 6, none, true, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(Policy{Plugin: "p", Network: tc.net, Required: tc.required}, tc.abi)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || d.Confine != tc.confine || !strings.Contains(d.Warning, tc.warn) || (tc.warn == "") != (d.Warning == "") {
				t.Fatalf("Decide = %+v, %v; want confine %v, warning %q", d, err, tc.confine, tc.warn)
			}
		})
	}
}

func TestWarnOnce(t *testing.T) {
	if !WarnOnce("test warning") || WarnOnce("test warning") {
		t.Error("WarnOnce does not say yes exactly once")
	}
}
