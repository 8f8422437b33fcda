package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// lockedWriter writes whole messages, one at a time, so that the SDK's
// messages and the parse errors below never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// maxLine is the longest message line accepted (the SDK's own limit is
// larger than any editor sends).
const maxLine = 64 << 20

// checkJSON passes the lines of in that are JSON on to the SDK and answers
// each that is not with a JSON-RPC parse error (-32700, id null), as
// JSON-RPC 2.0 asks; the SDK itself only logs such a line.
func checkJSON(in io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if !json.Valid(line) {
				_, _ = out.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON"}}` + "\n"))
				continue
			}
			if _, err := pw.Write(append(line, '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}
