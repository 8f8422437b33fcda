package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/kosong-host/kosong-host/host/serverclient"
)

// events serves a session's events as Server-Sent Events: each event's
// id is its sequence number and its data one JSON object. It starts after
// the client's Last-Event-ID (or ?after=), replaying what the log holds;
// when the client's id is older than the log, an events_lost event says
// which events are gone and the stream goes on from the oldest held. The
// stream ends when the session closes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	after, err := parseAfter(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, err.Error())
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var buf bytes.Buffer
	buf.WriteString("retry: 1000\n\n")
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	first := true
	for {
		evs, oldest, changed, closed := ss.log.since(after)
		if first && (after+1 < oldest || after > ss.log.last()) {
			// The client's id is older than what the log holds (or not
			// one of this session's): say so, then go on from the oldest.
			lost, _ := json.Marshal(lostEvent{Type: "events_lost", After: after, Oldest: oldest})
			writeEvent(&buf, oldest-1, lost)
			after = oldest - 1
			evs, _, changed, closed = ss.log.since(after)
		}
		first = false
		for _, ev := range evs {
			writeEvent(&buf, ev.seq, ev.data)
			after = ev.seq
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			buf.Reset()
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if closed && len(evs) == 0 {
			return
		}
		select {
		case <-changed:
		case <-keepAlive.C:
			buf.WriteString(": keep-alive\n\n")
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return // the server stopped (its sessions' logs were closed first)
		}
	}
}

// writeEvent writes one SSE event: id, then the data (one line: the JSON
// has no raw newlines).
func writeEvent(b *bytes.Buffer, seq int64, data []byte) {
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(seq, 10))
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
}

func sortSessions(list []serverclient.Session) {
	slices.SortFunc(list, func(a, b serverclient.Session) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmpString(a.ID, b.ID)
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
