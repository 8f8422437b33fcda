package limits

import (
	"testing"
)

func TestSafeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"call_1":       "call_1",
		"":             "unknown-call",
		"..":           "call..",
		"a/b\\c d":     "a_b_c_d",
		"tool-01.json": "tool-01.json",
	} {
		if got := SafeFileName(in); got != want {
			t.Errorf("SafeFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int]string{
		100: "100 bytes", 64 << 10: "64 KiB", 1536: "1.5 KiB", 16 << 20: "16 MiB", 12_000_000: "11.4 MiB",
	} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTableIsConsistent: the gRPC message limit holds the largest image with
// room to spare, an approval request, and a Describe answer of a few tools
// at their caps.
func TestTableIsConsistent(t *testing.T) {
	checks := []struct {
		what string
		ok   bool
	}{
		{"an image fits a message", ImageBytes < MessageBytes},
		{"a capped result's text fits beside an image (4 bytes a character at most, 3 fields)", ImageBytes+3*4*ResultChars < MessageBytes},
		{"an approval request fits a message", ApprovalBytes < MessageBytes},
		{"display blocks fit a message", DisplayBytes < MessageBytes},
		{"20 tools at their caps fit a Describe answer", 20*(SchemaBytes+DescriptionBytes) < MessageBytes},
		{"a stream-json line holds a capped result (6 bytes a character escaped)", 6*ResultChars < StreamJSONLineBytes},
		{"the message limit is 16 MiB, as plugins built before this table expect", MessageBytes == 16<<20},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: does not hold", c.what)
		}
	}
}
