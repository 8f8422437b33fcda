package loop

import (
	"context"
	"errors"
	"strings"

	"github.com/kosong-host/kosong-host/providers"
)

// ErrNothingToCompact: the history is too short to compact.
var ErrNothingToCompact = errors.New("nothing to compact: the history is only the last exchanges")

// Compact compacts the history now, between turns (the /compact command):
// the history but its last CompactKeep user and assistant messages is
// summarised by the model; instruction, if any, tells the model what to
// keep. It emits Compacted and returns the usage of the summary.
func (l *Loop) Compact(ctx context.Context, instruction string) (providers.Usage, error) {
	l.turnMu.Lock()
	defer l.turnMu.Unlock()
	var usage providers.Usage
	if compactionCut(l.snapshot()) == 0 {
		return usage, ErrNothingToCompact
	}
	request := compactRequest
	if instruction = strings.TrimSpace(instruction); instruction != "" {
		request += " The user asks: " + instruction
	}
	err := l.compactWith(ctx, l.tokens, &usage, request)
	if err == nil {
		l.tokens = 0
	}
	return usage, err
}
