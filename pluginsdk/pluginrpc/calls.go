package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// The plugin's side of the Calls stream: each CallFrame runs on a worker
// goroutine of its own (see callWorkers), under the same watchdog as a
// unary Call, and its outcome goes back as a CallEvent of the same id.

// streamCall is one running call of the stream. The watchdog is armed
// where the call's context is ended (a cancel frame, its timeout, the end
// of the stream) rather than by watching the context: that saves a
// channel and a registration in the parent context on every call.
type streamCall struct {
	req     *pluginv1.CallRequest
	cancel  context.CancelFunc
	mu      sync.Mutex
	done    bool
	dog     *time.Timer // the watchdog, once armed
	timeout *time.Timer // ends the call at its deadline
}

// end cancels the call and, unless it has returned, arms the watchdog.
func (c *streamCall) end(grace time.Duration, overrun func()) {
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done && c.dog == nil {
		c.dog = time.AfterFunc(grace, overrun)
	}
}

// finish records that the call returned, disarming the watchdog.
func (c *streamCall) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.dog != nil {
		c.dog.Stop()
	}
	if c.timeout != nil {
		c.timeout.Stop()
	}
}

// Calls serves the Calls stream until the host ends it; the calls still
// running then are cancelled.
func (s *grpcServer) Calls(stream grpc.BidiStreamingServer[pluginv1.CallFrame, pluginv1.CallEvent]) error {
	ctx, cancelAll := context.WithCancel(stream.Context())
	defer cancelAll()
	var sendMu sync.Mutex
	send := func(ev *pluginv1.CallEvent) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(ev)
	}
	if err := send(&pluginv1.CallEvent{}); err != nil {
		return err
	}
	var mu sync.Mutex
	running := map[uint64]*streamCall{}
	overrun := func(req *pluginv1.CallRequest) func() {
		return func() { s.overran(req) }
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range running {
			c.end(s.grace, overrun(c.req))
		}
	}()
	for {
		f, err := stream.Recv()
		if err != nil {
			return nil // the host ended the stream, or the connection is gone
		}
		id := f.GetId()
		if f.GetCancel() {
			mu.Lock()
			c := running[id]
			mu.Unlock()
			if c != nil {
				c.end(s.grace, overrun(c.req))
			}
			continue
		}
		req := f.GetCall()
		if id == 0 || req == nil {
			continue
		}
		cctx, cancel := context.WithCancel(ctx)
		c := &streamCall{req: req, cancel: cancel}
		if d := f.GetTimeoutNs(); d > 0 {
			var stop context.CancelFunc
			cctx, stop = context.WithTimeout(cctx, time.Duration(d))
			c.cancel = joinCancel(stop, cancel)
			c.mu.Lock()
			c.timeout = time.AfterFunc(time.Duration(d), func() { c.end(s.grace, overrun(req)) })
			c.mu.Unlock()
		}
		mu.Lock()
		running[id] = c
		mu.Unlock()
		s.workers.run(func() {
			resp, err := s.run(cctx, req)
			c.finish()
			mu.Lock()
			delete(running, id)
			mu.Unlock()
			c.cancel()
			ev := &pluginv1.CallEvent{Id: id, Response: resp}
			if err != nil {
				st := status.Convert(err)
				ev.Response, ev.Code, ev.Message = nil, int32(st.Code()), st.Message()
				if ev.Code == 0 {
					ev.Code = int32(codes.Unknown)
				}
			}
			_ = send(ev) // a failed send means the stream is gone
		})
	}
}

// callWorkers runs the stream's calls on goroutines kept between calls,
// whose stacks have grown already: a new goroutine per call would grow
// its stack (copying it) on every call. A call that finds no idle worker
// gets a new one; at most maxIdleWorkers stay parked.
type callWorkers struct {
	ch   chan func()
	idle atomic.Int32
}

const maxIdleWorkers = 8

func (w *callWorkers) run(f func()) {
	select {
	case w.ch <- f:
	default:
		go w.work(f)
	}
}

func (w *callWorkers) work(f func()) {
	for {
		f()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		f = <-w.ch
		w.idle.Add(-1)
	}
}

func joinCancel(a, b context.CancelFunc) context.CancelFunc { return func() { a(); b() } }

// callStream is the host's side of a plugin's Calls stream: it multiplexes
// the calls of every goroutine on one stream, and falls back to the unary
// Call for a plugin built before the stream existed. Its Call has the
// unary Call's contract: an error is a gRPC status error (Unavailable when
// the plugin's connection is gone), and a call whose ctx ends returns at
// once with ctx's status while the plugin is told to cancel it.
type callStream struct {
	client pluginv1.PluginClient

	mu      sync.Mutex
	unary   bool // the plugin has no Calls stream
	stream  grpc.BidiStreamingClient[pluginv1.CallFrame, pluginv1.CallEvent]
	end     context.CancelFunc // ends the stream
	opening chan struct{}      // closed when the opening in progress ends
	nextID  uint64
	pending map[uint64]chan *pluginv1.CallEvent
	sendMu  sync.Mutex
	closed  bool
}

// newCallStream returns the calls of client; the stream opens with the
// first call.
func newCallStream(client pluginv1.PluginClient) *callStream {
	return &callStream{client: client}
}

// errNoStream says the plugin answered the stream's opening with
// Unimplemented.
var errNoStream = errors.New("no Calls stream")

// Call runs one tool call on the stream, or unary if the plugin has none.
func (c *callStream) Call(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	id, ch, err := c.register(ctx)
	if errors.Is(err, errNoStream) {
		return c.client.Call(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	f := &pluginv1.CallFrame{Id: id, Call: req}
	if dl, ok := ctx.Deadline(); ok {
		f.TimeoutNs = max(int64(time.Until(dl)), 1)
	}
	if err := c.send(f); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case ev := <-ch:
		return eventResult(ev)
	case <-ctx.Done():
		if c.forget(id) {
			_ = c.send(&pluginv1.CallFrame{Id: id, Cancel: true})
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		// The outcome came as ctx ended.
		return eventResult(<-ch)
	}
}

func eventResult(ev *pluginv1.CallEvent) (*pluginv1.CallResponse, error) {
	if ev.GetCode() != 0 {
		return nil, status.Error(codes.Code(ev.GetCode()), ev.GetMessage())
	}
	if ev.GetResponse() == nil {
		return nil, status.Error(codes.Internal, "the plugin returned no response")
	}
	return ev.GetResponse(), nil
}

// register opens the stream if need be and reserves an id for a call. A
// call that comes while another opens the stream waits for the outcome, or
// for its own ctx to end.
func (c *callStream) register(ctx context.Context) (uint64, chan *pluginv1.CallEvent, error) {
	for {
		c.mu.Lock()
		switch {
		case c.closed:
			c.mu.Unlock()
			return 0, nil, status.Error(codes.Canceled, "the plugin's calls are closed")
		case c.unary:
			c.mu.Unlock()
			return 0, nil, errNoStream
		case c.stream != nil:
			c.nextID++
			id, ch := c.nextID, make(chan *pluginv1.CallEvent, 1)
			c.pending[id] = ch
			c.mu.Unlock()
			return id, ch, nil
		case c.opening != nil:
			wait := c.opening
			c.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return 0, nil, status.FromContextError(ctx.Err()).Err()
			}
		default:
			done := make(chan struct{})
			c.opening = done
			c.mu.Unlock()
			err := c.open(ctx)
			c.mu.Lock()
			c.opening = nil
			close(done)
			c.mu.Unlock()
			if err != nil && !errors.Is(err, errNoStream) {
				return 0, nil, err
			}
		}
	}
}

// open opens the stream and waits for the plugin's answer: the event of id
// 0, or Unimplemented from a plugin without the stream.
func (c *callStream) open(ctx context.Context) error {
	sctx, end := context.WithCancel(context.Background())
	stream, err := c.client.Calls(sctx)
	if err != nil {
		end()
		return err
	}
	first := make(chan error, 1)
	go func() {
		ev, err := stream.Recv()
		if err == nil && ev.GetId() != 0 {
			err = status.Error(codes.Internal, "the plugin opened the Calls stream with a call event")
		}
		first <- err
	}()
	select {
	case err = <-first:
	case <-ctx.Done():
		end()
		<-first
		return status.FromContextError(ctx.Err()).Err()
	}
	if err != nil {
		end()
		if status.Code(err) != codes.Unimplemented {
			return err
		}
		c.mu.Lock()
		c.unary = true
		c.mu.Unlock()
		return errNoStream
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		end()
	default:
		c.stream, c.end, c.pending = stream, end, map[uint64]chan *pluginv1.CallEvent{}
		go c.receive(stream, end)
	}
	return nil
}

// receive hands each event to its call until the stream fails; the calls
// still waiting then get the stream's error, and the next call opens a
// new stream.
func (c *callStream) receive(stream grpc.BidiStreamingClient[pluginv1.CallFrame, pluginv1.CallEvent], end context.CancelFunc) {
	for {
		ev, err := stream.Recv()
		if err != nil {
			end()
			st := status.Convert(err)
			if st.Code() == codes.OK {
				st = status.New(codes.Unavailable, "the plugin ended its calls stream")
			}
			c.mu.Lock()
			if c.stream == stream {
				c.stream, c.end = nil, nil
			}
			pending := c.pending
			c.pending = nil
			c.mu.Unlock()
			for _, ch := range pending {
				ch <- &pluginv1.CallEvent{Code: int32(st.Code()), Message: st.Message()}
			}
			return
		}
		c.mu.Lock()
		ch := c.pending[ev.GetId()]
		delete(c.pending, ev.GetId())
		c.mu.Unlock()
		if ch != nil {
			ch <- ev
		}
	}
}

// forget drops a call's id; false means its outcome is already on its way.
func (c *callStream) forget(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; !ok {
		return false
	}
	delete(c.pending, id)
	return true
}

func (c *callStream) send(f *pluginv1.CallFrame) error {
	c.mu.Lock()
	stream := c.stream
	c.mu.Unlock()
	if stream == nil {
		return status.Error(codes.Unavailable, "the plugin's calls stream is gone")
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if err := stream.Send(f); err != nil {
		// Send reports io.EOF when the stream failed; Recv has the reason.
		return status.Error(codes.Unavailable, fmt.Sprintf("the plugin's calls stream is gone: %v", err))
	}
	return nil
}

// Streaming reports whether calls go over the stream: false before the
// first call and for a plugin without the stream.
func (c *callStream) Streaming() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stream != nil
}

// Close ends the stream; calls still waiting get Canceled.
func (c *callStream) Close() {
	c.mu.Lock()
	c.closed = true
	end := c.end
	c.mu.Unlock()
	if end != nil {
		end()
	}
}
