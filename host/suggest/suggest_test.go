package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"echo", "Shell", "Think", "sonnet", "/help", "/model", "big"}
	for _, c := range []struct{ name, want string }{
		{"ecko", "echo"},
		{"Ecko", "echo"},
		{"Thnk", "Think"},
		{"shell", "Shell"},
		{"sonet", "sonnet"},
		{"/hlep", "/help"},
		{"/foo", ""},
		{"zzzzzz", ""},
		{"echo", ""},
		{"bgi", "big"},
		{"gbi", ""},
		{"ohce", ""},
	} {
		if got := Closest(c.name, known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Hint("ecko", known); got != " (did you mean echo?)" {
		t.Errorf("Hint = %q", got)
	}
	if got := Hint("qqqq", known); got != "" {
		t.Errorf("Hint = %q, want none", got)
	}
}
