package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kosong-host/kosong-host/providers"
)

// Compaction, as in Kimi CLI scaled to the window: the history but its
// last CompactKeep user and assistant messages is summarised by the model
// and replaced by the summary when the context reaches CompactRatio of the
// model's context window, or comes within its reserve of it. Kimi reserves
// CompactReserve tokens of its own CompactReserveWindow-token window; a
// smaller window reserves the same share of itself (50,000 of 262,144, about
// 19 %), so an 8k or 32k window compacts at about 81 % full, not before
// every turn; a window of CompactReserveWindow tokens or more reserves
// CompactReserve tokens, as Kimi does.
const (
	CompactRatio         = 0.85
	CompactReserve       = 50_000
	CompactReserveWindow = 262_144
	CompactKeep          = 2
)

const compactSystem = "You summarise a conversation between a user and an AI agent working with tools, " +
	"so that the agent can carry on with the summary instead of the full history."

const compactRequest = "Summarise the conversation so far for yourself, to continue the work without it. Keep: the user's goals " +
	"and instructions, decisions made, facts found (file paths, names, commands, errors and their causes), what is done " +
	"and what is left. Be concise and concrete. Do not call tools; answer with the summary only."

// SummaryPrefix starts the user message that replaces a compacted history.
const SummaryPrefix = "<system>The earlier part of this conversation was compacted. Summary:</system>\n"

// compactReserve is the number of tokens kept free at the end of a window
// of size: CompactReserve, or its share of CompactReserveWindow in a
// smaller window.
func compactReserve(size int64) int64 {
	if size >= CompactReserveWindow {
		return CompactReserve
	}
	return size * CompactReserve / CompactReserveWindow
}

// compactThreshold is the context size at which a window of size compacts
// (0: unknown window, never).
func compactThreshold(size int64) int64 {
	if size <= 0 {
		return 0
	}
	return min(int64(CompactRatio*float64(size)), size-compactReserve(size))
}

// needsCompaction reports whether a context of tokens needs compacting in a
// window of size (0: unknown, never).
func needsCompaction(tokens, size int64) bool {
	if size <= 0 || tokens <= 0 {
		return false
	}
	return tokens >= compactThreshold(size)
}

// compactionCut is the index from which history is kept: the last
// CompactKeep user or assistant messages and what follows them (an
// assistant message keeps its tool messages). 0 means nothing to compact.
func compactionCut(history []providers.Message) int {
	kept := 0
	for i := len(history) - 1; i >= 0; i-- {
		if r := history[i].Role; r == providers.RoleUser || r == providers.RoleAssistant {
			kept++
			if kept == CompactKeep {
				return i
			}
		}
	}
	return 0
}

// compact replaces the history but its tail with the model's summary of it.
func (l *Loop) compact(ctx context.Context, tokens int64, usage *providers.Usage) error {
	return l.compactWith(ctx, tokens, usage, compactRequest)
}

// compactWith compacts with request as the question to the model.
func (l *Loop) compactWith(ctx context.Context, tokens int64, usage *providers.Usage, request string) error {
	history := l.snapshot()
	cut := compactionCut(history)
	if cut == 0 {
		return nil
	}
	l.emit(CompactionStarted{Tokens: tokens})
	ask := append(append([]providers.Message(nil), history[:cut]...),
		providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(request)}})
	// The tools are still declared: some providers refuse a history with
	// tool calls and no tools.
	stream, err := l.cfg.Provider.Stream(ctx, providers.Request{System: compactSystem, History: ask, Tools: l.cfg.Toolset.Tools()})
	if err != nil {
		return err
	}
	defer stream.Close()
	var summary strings.Builder
	for {
		ev, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch ev.Kind {
		case providers.EventText:
			summary.WriteString(ev.Text)
		case providers.EventUsage:
			if ev.Usage != nil {
				addUsage(usage, *ev.Usage)
				l.charge(*ev.Usage)
			}
		}
	}
	text := strings.TrimSpace(summary.String())
	if text == "" {
		return errors.New("the model gave an empty summary")
	}
	l.mu.Lock()
	rest := l.history[cut:]
	l.history = append([]providers.Message{{Role: providers.RoleUser,
		Content: []providers.ContentPart{providers.TextPart(SummaryPrefix + text)}}}, rest...)
	l.mu.Unlock()
	l.emit(Compacted{Tokens: tokens, Summarised: cut, Kept: len(rest)})
	return nil
}

// CompactionStarted: the model is asked to summarise the history (a
// Compacted follows); Tokens is the context size that triggered it.
type CompactionStarted struct {
	Tokens int64
}

func (CompactionStarted) event() {}

// Compacted reports a compaction: Summarised messages were replaced by a
// summary, Kept were kept; Tokens is the context size that triggered it.
// Err is set when the compaction failed and the history was kept whole.
type Compacted struct {
	Tokens     int64
	Summarised int
	Kept       int
	Err        error
}

func (Compacted) event() {}

// String describes the compaction for the user.
func (c Compacted) String() string {
	if c.Err != nil {
		return fmt.Sprintf("context compaction failed (%d tokens), the full history is kept: %v", c.Tokens, c.Err)
	}
	return fmt.Sprintf("context compacted: %d messages summarised, %d kept (%d tokens)", c.Summarised, c.Kept, c.Tokens)
}
