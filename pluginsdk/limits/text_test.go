package limits

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
		cut  bool
	}{
		{"fits", "short", 10, "short", false},
		{"exactly", strings.Repeat("a", 20), 20, strings.Repeat("a", 20), false},
		{"cut, the marker within the cap", strings.Repeat("a", 30), 20, "aaaaaa" + TruncatedMarker, true},
		{"lines are not counted alone", strings.Repeat("ab\n", 5), 100, strings.Repeat("ab\n", 5), false},
		{"multi-byte characters kept whole", strings.Repeat("世", 30), 20, strings.Repeat("世", 6) + TruncatedMarker, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Cut(tt.in, tt.max)
			if got != tt.want || cut != tt.cut || utf8.RuneCountInString(got) > tt.max {
				t.Fatalf("Cut = %q, %v; want %q, %v", got, cut, tt.want, tt.cut)
			}
		})
	}
}
