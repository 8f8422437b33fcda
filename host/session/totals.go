package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kosong-host/kosong-host/providers"
)

// TotalsFile is the file in the session directory that sums what the
// session's turns used. Sessions from before it have none.
const TotalsFile = "totals.json"

// Totals sum the session's turns: the tokens the providers reported, the
// model responses (turns, as --max-turns counts them) and, while every
// turn was priced, the cost.
type Totals struct {
	providers.Usage
	Turns int `json:"turns"`
	// CostUSD is the cost at the models' prices; Priced says every turn
	// had prices (else the cost is not known and not shown).
	CostUSD float64 `json:"cost_usd"`
	Priced  bool    `json:"priced"`
	// Prompts counts the turns of the user (prompts answered).
	Prompts int `json:"prompts"`
}

// ReadTotals reads the Totals of the session in dir; a session without
// any gives zero Totals, found false.
func ReadTotals(dir string) (t Totals, found bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, TotalsFile))
	if errors.Is(err, os.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("session: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, false, fmt.Errorf("session: %s: %w", filepath.Join(dir, TotalsFile), err)
	}
	return t, true, nil
}

// AddTotals adds one turn of the user to the session's totals: its usage,
// model responses and cost (priced false: the turn had no prices).
func (s *Session) AddTotals(u providers.Usage, turns int, cost float64, priced bool) error {
	t, found, err := ReadTotals(s.Dir)
	if err != nil {
		return err
	}
	if !found {
		t.Priced = true
	}
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheCreationTokens += u.CacheCreationTokens
	t.Turns += turns
	t.Prompts++
	t.CostUSD += cost
	t.Priced = t.Priced && priced
	if !t.Priced {
		t.CostUSD = 0
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	tmp := filepath.Join(s.Dir, TotalsFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, TotalsFile)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session: %w", err)
	}
	return nil
}
