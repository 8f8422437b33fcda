package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

const (
	benchCalls    = 8
	benchToolTime = 200 * time.Millisecond
)

// stamps records when each tool call was emitted by the stream and when
// the tool started running it.
type stamps struct {
	mu      sync.Mutex
	emitted map[string]time.Time
	started map[string]time.Time
}

func (s *stamps) mark(m map[string]time.Time, id string) {
	now := time.Now()
	s.mu.Lock()
	m[id] = now
	s.mu.Unlock()
}

// benchProvider streams benchCalls tool calls on its first response, and
// text on the second.
type benchProvider struct {
	st    *stamps
	calls int
}

func (p *benchProvider) Name() string  { return "bench" }
func (p *benchProvider) Model() string { return "bench" }
func (p *benchProvider) Stream(context.Context, providers.Request) (providers.Stream, error) {
	p.calls++
	var evs []providers.Event
	if p.calls == 1 {
		for i := range benchCalls {
			evs = append(evs, providers.Event{Kind: providers.EventToolCall,
				ToolCall: &providers.ToolCall{ID: fmt.Sprint("call_", i), Name: "Sleep", Arguments: fmt.Sprintf(`{"i":%d}`, i)}})
		}
	} else {
		evs = append(evs, providers.Event{Kind: providers.EventText, Text: "done"})
	}
	return &benchStream{st: p.st, evs: evs}, nil
}

type benchStream struct {
	st  *stamps
	evs []providers.Event
}

func (s *benchStream) Next() (providers.Event, error) {
	if len(s.evs) == 0 {
		return providers.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	if ev.ToolCall != nil {
		s.st.mark(s.st.emitted, ev.ToolCall.ID)
	}
	return ev, nil
}

func (s *benchStream) Close() error { return nil }

// BenchmarkParallelStep runs a step of 8 parallel calls to a tool that
// sleeps 200 ms. It reports the step's duration as a multiple of 200 ms
// (parallel-ratio; the target is <= 1.3) and the median delay from the
// stream completing a call to the tool starting it (dispatch-p50-µs).
func BenchmarkParallelStep(b *testing.B) {
	var ratios, delays []float64
	for b.Loop() {
		st := &stamps{emitted: map[string]time.Time{}, started: map[string]time.Time{}}
		ts := toolset.New(nil)
		err := ts.Add(&fakeTool{name: "Sleep", fn: func(ctx context.Context, id string, _ json.RawMessage) toolset.Result {
			st.mark(st.started, id)
			select {
			case <-time.After(benchToolTime):
			case <-ctx.Done():
			}
			return toolset.Result{Brief: "slept"}
		}})
		if err != nil {
			b.Fatal(err)
		}
		l, err := New(Config{Provider: &benchProvider{st: st}, Toolset: ts})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res, err := l.Turn(context.Background(), "go")
		elapsed := time.Since(start)
		if err != nil || res.Steps != 2 {
			b.Fatalf("res %+v err %v", res, err)
		}
		ratios = append(ratios, float64(elapsed)/float64(benchToolTime))
		for id, e := range st.emitted {
			delays = append(delays, float64(st.started[id].Sub(e))/float64(time.Microsecond))
		}
	}
	ratio := median(ratios)
	b.ReportMetric(ratio, "parallel-ratio")
	b.ReportMetric(median(delays), "dispatch-p50-µs")
	if ratio > 1.3 {
		b.Errorf("a step of %d parallel %v calls took %.2fx %v, want <= 1.3x", benchCalls, benchToolTime, ratio, benchToolTime)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
