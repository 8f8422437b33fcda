package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport serves one client over newline-delimited JSON-RPC on a
// reader and a writer (stdin and stdout by default), as mcp.StdioTransport
// does, with less work a message: each line is read into one buffer kept
// for the connection and decoded once with encoding/json, where the
// go-sdk's transport decodes it two or three times, each through a decoder
// that allocates a 32 KiB buffer of its own. Messages, batches (an array
// of messages, answered with an array of the responses to its calls) and
// the maximum line length behave as in the go-sdk's transport; a line that
// is not a JSON-RPC message ends the connection with an error naming it.
type StdioTransport struct {
	// In and Out default to os.Stdin and os.Stdout.
	In  io.Reader
	Out io.Writer
	// MaxLineLength bounds a message's line (0: mcp.DefaultMaxLineLength).
	MaxLineLength int
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = pollable(os.Stdin, os.O_RDONLY)
	}
	if out == nil {
		out = pollable(os.Stdout, os.O_WRONLY)
	}
	limit := t.MaxLineLength
	if limit <= 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &stdioConn{in: in, out: out, incoming: make(chan incoming), closed: make(chan struct{})}
	// Reads happen in a goroutine of their own, so that Close ends a Read
	// waiting for input even when the reader cannot be interrupted.
	go c.readLines(limit)
	return c, nil
}

type incoming struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
}

type stdioConn struct {
	in       io.Reader
	out      io.Writer
	incoming chan incoming
	queue    []jsonrpc.Message // the rest of the batch last read; reads are serial

	writeMu sync.Mutex
	buf     []byte // the line being written, under writeMu

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*batch // an unanswered call -> its batch

	closeOnce sync.Once
	closed    chan struct{}
}

// batch collects the responses to the calls of one incoming batch.
type batch struct {
	waiting   int
	responses []*jsonrpc.Response
	index     map[jsonrpc.ID]int
}

// ErrLineTooLong ends a connection whose client sent a line longer than
// the maximum line length.
var ErrLineTooLong = errors.New("a JSON-RPC message exceeds the maximum line length")

// readLines reads and decodes lines until the input ends, a line is not a
// JSON-RPC message, or the connection is closed.
func (c *stdioConn) readLines(limit int) {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var long []byte // a line longer than r's buffer, assembled
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= limit {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		var in incoming
		switch {
		case len(line) > limit:
			in.err = ErrLineTooLong
		case err != nil && !(errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0):
			in.err = err
		default:
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue // a blank line, as the go-sdk's decoder skips white space
			}
			in.msgs, in.batch, in.err = decodeLine(line)
		}
		select {
		case c.incoming <- in:
		case <-c.closed:
			return
		}
		if in.err != nil {
			return
		}
		if err != nil { // the last line, without its newline
			select {
			case c.incoming <- incoming{err: io.EOF}:
			case <-c.closed:
			}
			return
		}
	}
}

// wireMessage is a JSON-RPC message as it comes in.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeLine decodes one line: a message, or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, bool, error) {
	if line[0] != '[' {
		m, err := decodeMessage(line)
		if err != nil {
			return nil, false, err
		}
		return []jsonrpc.Message{m}, false, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, true, fmt.Errorf("a JSON-RPC batch that is not valid JSON: %v", err)
	}
	if len(raws) == 0 {
		return nil, true, errors.New("an empty JSON-RPC batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, true, err
		}
		msgs[i] = m
	}
	return msgs, true, nil
}

// decodeMessage decodes a request (a call or a notification: a "method")
// or a response (a valid "id" and no method), as jsonrpc.DecodeMessage
// does.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("a JSON-RPC message that is not valid JSON: %v", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("a JSON-RPC message with version tag %q, not \"2.0\"", w.Version)
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, fmt.Errorf("a JSON-RPC message with an id of type %T: want a string or a number", w.ID)
	}
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("a JSON-RPC message with neither a method nor an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// Read implements mcp.Connection.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	var in incoming
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if in.err != nil {
		return nil, in.err
	}
	if in.batch {
		if err := c.addBatch(in.msgs); err != nil {
			return nil, err
		}
	}
	c.queue = in.msgs[1:]
	return in.msgs[0], nil
}

// addBatch records the calls of an incoming batch, whose responses go out
// together.
func (c *stdioConn) addBatch(msgs []jsonrpc.Message) error {
	b := &batch{index: map[jsonrpc.ID]int{}}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := b.index[req.ID]; dup {
				return fmt.Errorf("a JSON-RPC batch with the id %v twice", req.ID.Raw())
			}
			b.index[req.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
		}
	}
	if len(b.responses) == 0 {
		return nil
	}
	b.waiting = len(b.responses)
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.index {
		if _, dup := c.batches[id]; dup {
			return fmt.Errorf("a JSON-RPC batch with the id %v of an unanswered call", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return nil
}

// inBatch records a response to a call that came in a batch: it reports
// whether it did, and the batch's responses once they are all there.
func (c *stdioConn) inBatch(r *jsonrpc.Response) ([]*jsonrpc.Response, bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[r.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, r.ID)
	b.responses[b.index[r.ID]] = r
	if b.waiting--; b.waiting > 0 {
		return nil, true
	}
	return b.responses, true
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Responses to the calls read before the input ended still go out.
	msgs := []jsonrpc.Message{msg}
	isBatch := false
	if r, ok := msg.(*jsonrpc.Response); ok {
		all, in := c.inBatch(r)
		if in && all == nil {
			return nil // more responses of its batch to come
		}
		if in {
			msgs, isBatch = msgs[:0], true
			for _, r := range all {
				msgs = append(msgs, r)
			}
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.buf = c.buf[:0]
	if isBatch {
		c.buf = append(c.buf, '[')
	}
	for i, m := range msgs {
		data, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return fmt.Errorf("marshaling message: %v", err)
		}
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		c.buf = append(c.buf, data...)
	}
	if isBatch {
		c.buf = append(c.buf, ']')
	}
	c.buf = append(c.buf, '\n')
	_, err := c.out.Write(c.buf)
	if cap(c.buf) > 1<<20 {
		c.buf = nil // keep no large result's buffer
	}
	return err
}

// Close implements mcp.Connection: it ends a Read waiting for input and
// closes the input when it can be closed.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			err = cl.Close()
		}
	})
	return err
}

// SessionID implements mcp.Connection: a stdio connection has none.
func (c *stdioConn) SessionID() string { return "" }
