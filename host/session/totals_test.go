package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

// TestTotals: turns add up; one unpriced turn makes the cost unknown; a
// session without totals lists without them; a broken file is an error
// naming it.
func TestTotals(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name       string
		priced     []bool
		wantPriced bool
		wantCost   float64
	}{
		{name: "priced", priced: []bool{true, true}, wantPriced: true, wantCost: 0.5},
		{name: "one unpriced", priced: []bool{true, false}, wantPriced: false, wantCost: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Options{Root: filepath.Join(root, tt.name)})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.priced {
				if err := s.AddTotals(providers.Usage{InputTokens: 10, OutputTokens: 5}, 2, 0.25, p); err != nil {
					t.Fatal(err)
				}
			}
			got, found, err := ReadTotals(s.Dir)
			if err != nil || !found || got.Total() != 30 || got.Turns != 4 || got.Prompts != 2 || got.Priced != tt.wantPriced || got.CostUSD != tt.wantCost {
				t.Fatalf("totals %+v found %v err %v", got, found, err)
			}
			list, err := List(Options{Root: filepath.Join(root, tt.name)}, "")
			if err != nil || len(list) != 1 || !list[0].HasTotals || list[0].Totals != got {
				t.Fatalf("list %+v err %v", list, err)
			}
		})
	}
	old, err := New(Options{Root: filepath.Join(root, "old")})
	if err != nil {
		t.Fatal(err)
	}
	if list, err := List(Options{Root: filepath.Join(root, "old")}, ""); err != nil || len(list) != 1 || list[0].HasTotals {
		t.Fatalf("a session without totals: %+v %v", list, err)
	}
	if err := os.WriteFile(filepath.Join(old.Dir, TotalsFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadTotals(old.Dir); err == nil || !filepath.IsAbs(old.Dir) {
		t.Fatal("a broken totals file is no error")
	}
}
