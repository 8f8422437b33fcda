package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// bound guards against a hang; no test waits that long on purpose.
const bound = 30 * time.Second

// fakeServer echoes the arguments of "Echo", reports the deadline its
// context has for "Deadline", waits for cancellation on "Wait" (telling
// started and cancelled), and fails "Fail".
type fakeServer struct {
	started, cancelled chan string
}

func (f *fakeServer) Describe(context.Context) (Description, error) { return Description{}, nil }
func (f *fakeServer) Load(context.Context, LoadRequest, DialHost) ([]ToolLoad, error) {
	return nil, nil
}

func (f *fakeServer) Call(ctx context.Context, req CallRequest) (Result, error) {
	switch req.ToolName {
	case "Deadline":
		dl, ok := ctx.Deadline()
		if !ok {
			return Result{Output: []Part{{Text: "none"}}}, nil
		}
		return Result{Output: []Part{{Text: time.Until(dl).Round(time.Minute).String()}}}, nil
	case "Wait":
		f.started <- req.ToolCallID
		<-ctx.Done()
		f.cancelled <- req.ToolCallID
		return Result{Kind: ResultError, Message: "cancelled"}, nil
	case "Stuck":
		f.started <- req.ToolCallID
		select {} // ignores its context
	case "Fail":
		return Result{}, status.Error(codes.FailedPrecondition, "not now")
	}
	return Result{Output: []Part{{Text: string(req.Arguments)}}}, nil
}

// serve serves svc over an in-memory connection and returns a client; the
// returned stop ends the server.
func serve(t *testing.T, svc pluginv1.PluginServer) (pluginv1.PluginClient, func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(ServerOptions()...)
	pluginv1.RegisterPluginServer(s, svc)
	go s.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///buf", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); s.Stop() })
	return pluginv1.NewPluginClient(conn), s.Stop
}

func newFake() *fakeServer {
	return &fakeServer{started: make(chan string, 1), cancelled: make(chan string, 1)}
}

func streamServer(impl Server) *grpcServer {
	return newGRPCServer(impl, nil, hclog.NewNullLogger(), time.Minute, func() {})
}

func text(t *testing.T, cs *callStream, ctx context.Context, req *pluginv1.CallRequest) string {
	t.Helper()
	resp, err := cs.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetOk().GetOutput()[0].GetText()
}

func TestCallStreamRoutesConcurrentCalls(t *testing.T) {
	client, _ := serve(t, streamServer(newFake()))
	cs := newCallStream(client)
	defer cs.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := fmt.Sprintf(`{"n":%d}`, i)
			resp, err := cs.Call(context.Background(), &pluginv1.CallRequest{ToolCallId: "c", ToolName: "Echo", Arguments: args})
			if err != nil {
				errs <- err
				return
			}
			if got := resp.GetOk().GetOutput()[0].GetText(); got != args {
				errs <- fmt.Errorf("call %d got %s", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if cs.unary || cs.stream == nil {
		t.Fatal("the calls did not go over the stream")
	}
}

func TestCallStreamCarriesTheDeadline(t *testing.T) {
	client, _ := serve(t, streamServer(newFake()))
	cs := newCallStream(client)
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if got := text(t, cs, ctx, &pluginv1.CallRequest{ToolName: "Deadline"}); got != "10m0s" {
		t.Errorf("with a deadline the plugin saw %s", got)
	}
	if got := text(t, cs, context.Background(), &pluginv1.CallRequest{ToolName: "Deadline"}); got != "none" {
		t.Errorf("without a deadline the plugin saw %s", got)
	}
	// A deadline that passes ends the call on both sides.
	f := newFake()
	client, _ = serve(t, streamServer(f))
	cs2 := newCallStream(client)
	defer cs2.Close()
	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	// The plugin's copy of the deadline and the host's end together: the
	// host sees its own deadline or the plugin's answer to it.
	resp, err := cs2.Call(short, &pluginv1.CallRequest{ToolCallId: "w", ToolName: "Wait"})
	if status.Code(err) != codes.DeadlineExceeded && resp.GetError().GetMessage() != "cancelled" {
		t.Fatalf("past its deadline: %v, %v", resp, err)
	}
	select {
	case <-f.cancelled:
	case <-time.After(bound):
		t.Fatal("the plugin's call outlived its deadline")
	}
}

func TestCallStreamCancel(t *testing.T) {
	f := newFake()
	client, _ := serve(t, streamServer(f))
	cs := newCallStream(client)
	defer cs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.Call(ctx, &pluginv1.CallRequest{ToolCallId: "w1", ToolName: "Wait"})
		done <- err
	}()
	select {
	case <-f.started:
	case <-time.After(bound):
		t.Fatal("the call never started")
	}
	cancel()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled {
			t.Fatalf("cancelled call: %v", err)
		}
	case <-time.After(bound):
		t.Fatal("the cancelled call did not return")
	}
	select {
	case id := <-f.cancelled:
		if id != "w1" {
			t.Fatalf("cancelled %s", id)
		}
	case <-time.After(bound):
		t.Fatal("the plugin's call was not cancelled")
	}
	// The stream still carries calls.
	if got := text(t, cs, context.Background(), &pluginv1.CallRequest{ToolName: "Echo", Arguments: "x"}); got != "x" {
		t.Fatalf("after the cancellation: %s", got)
	}
}

func TestCallStreamErrors(t *testing.T) {
	f := newFake()
	client, stop := serve(t, streamServer(f))
	cs := newCallStream(client)
	defer cs.Close()
	_, err := cs.Call(context.Background(), &pluginv1.CallRequest{ToolName: "Fail"})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != "not now" {
		t.Fatalf("a failing call: %v", err)
	}
	// The plugin goes away during a call: the call fails as a unary call
	// on a dead connection does.
	done := make(chan error, 1)
	go func() {
		_, err := cs.Call(context.Background(), &pluginv1.CallRequest{ToolCallId: "w", ToolName: "Wait"})
		done <- err
	}()
	<-f.started
	go stop()
	select {
	case err := <-done:
		if c := status.Code(err); c != codes.Unavailable && c != codes.Canceled {
			t.Fatalf("a call whose plugin went away: %v", err)
		}
	case <-time.After(bound):
		t.Fatal("the call of a plugin that went away did not return")
	}
	cs.Close()
	if _, err := cs.Call(context.Background(), &pluginv1.CallRequest{ToolName: "Echo"}); err == nil {
		t.Fatal("a call after Close succeeded")
	}
}

// unaryOnly is a Plugin service as built before the Calls stream.
type unaryOnly struct {
	pluginv1.UnimplementedPluginServer
	f *fakeServer
}

func (u unaryOnly) Call(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	r, err := u.f.Call(ctx, fromProtoCallRequest(req))
	if err != nil {
		return nil, err
	}
	return toProtoResult(r), nil
}

func TestCallStreamFallsBackToUnaryCall(t *testing.T) {
	f := newFake()
	client, _ := serve(t, unaryOnly{f: f})
	cs := newCallStream(client)
	defer cs.Close()
	if got := text(t, cs, context.Background(), &pluginv1.CallRequest{ToolName: "Echo", Arguments: "old"}); got != "old" {
		t.Fatalf("unary call: %s", got)
	}
	if !cs.unary {
		t.Fatal("the call did not fall back to the unary Call")
	}
	// Cancellation works as it always did.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.Call(ctx, &pluginv1.CallRequest{ToolCallId: "w", ToolName: "Wait"})
		done <- err
	}()
	<-f.started
	cancel()
	if err := <-done; !errors.Is(status.FromContextError(context.Canceled).Err(), err) && status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled unary call: %v", err)
	}
	select {
	case <-f.cancelled:
	case <-time.After(bound):
		t.Fatal("the plugin's unary call was not cancelled")
	}
}

// slowOpen holds the opening of the Calls stream until release is closed.
type slowOpen struct {
	*grpcServer
	release chan struct{}
}

func (s slowOpen) Calls(stream grpc.BidiStreamingServer[pluginv1.CallFrame, pluginv1.CallEvent]) error {
	<-s.release
	return s.grpcServer.Calls(stream)
}

// TestCallStreamWaitForTheOpeningEndsWithTheCall: a call that comes while
// another opens the stream still ends with its own context.
func TestCallStreamWaitForTheOpeningEndsWithTheCall(t *testing.T) {
	release := make(chan struct{})
	client, _ := serve(t, slowOpen{grpcServer: streamServer(newFake()), release: release})
	cs := newCallStream(client)
	defer cs.Close()
	first := make(chan string, 1)
	go func() {
		resp, err := cs.Call(context.Background(), &pluginv1.CallRequest{ToolName: "Echo", Arguments: "first"})
		if err != nil {
			first <- err.Error()
			return
		}
		first <- resp.GetOk().GetOutput()[0].GetText()
	}()
	for deadline := time.Now().Add(bound); ; time.Sleep(time.Millisecond) {
		cs.mu.Lock()
		opening := cs.opening != nil
		cs.mu.Unlock()
		if opening {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream never began opening")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := cs.Call(ctx, &pluginv1.CallRequest{ToolName: "Echo"}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a call waiting for the opening: %v", err)
	}
	close(release)
	select {
	case got := <-first:
		if got != "first" {
			t.Fatalf("the opening call: %s", got)
		}
	case <-time.After(bound):
		t.Fatal("the opening call did not return")
	}
}

// TestCallStreamOverrun: a streamed call still running past the grace
// period after it was cancelled, or after the stream ended, overruns as a
// unary call does; one that returns in time does not.
func TestCallStreamOverrun(t *testing.T) {
	for _, how := range []string{"cancelled", "stream ended", "deadline"} {
		t.Run(how, func(t *testing.T) {
			f := newFake()
			overrun := make(chan struct{}, 1)
			srv := newGRPCServer(f, nil, hclog.NewNullLogger(), 20*time.Millisecond, func() {
				select {
				case overrun <- struct{}{}:
				default:
				}
			})
			client, _ := serve(t, srv)
			cs := newCallStream(client)
			defer cs.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "deadline" {
				ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
			}
			go cs.Call(ctx, &pluginv1.CallRequest{ToolCallId: "s", ToolName: "Stuck"})
			<-f.started
			switch how {
			case "cancelled":
				cancel()
			case "stream ended":
				cs.Close()
			}
			select {
			case <-overrun:
			case <-time.After(bound):
				t.Fatal("no overrun")
			}
		})
	}
	t.Run("returns in time", func(t *testing.T) {
		f := newFake()
		overrun := make(chan struct{}, 1)
		srv := newGRPCServer(f, nil, hclog.NewNullLogger(), 100*time.Millisecond, func() { overrun <- struct{}{} })
		client, _ := serve(t, srv)
		cs := newCallStream(client)
		defer cs.Close()
		ctx, cancel := context.WithCancel(context.Background())
		go cs.Call(ctx, &pluginv1.CallRequest{ToolCallId: "w", ToolName: "Wait"})
		<-f.started
		cancel()
		<-f.cancelled
		select {
		case <-overrun:
			t.Fatal("overrun after the call returned")
		case <-time.After(300 * time.Millisecond):
		}
	})
}
