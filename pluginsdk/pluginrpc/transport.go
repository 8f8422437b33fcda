package pluginrpc

import (
	"math"
	"runtime"

	"google.golang.org/grpc"
)

// The HTTP/2 flow-control windows of the host-plugin connection. Both ends
// are on one machine, so the windows are static and large: gRPC's dynamic
// windows (its bandwidth estimator) would send a PING, and get one back,
// after nearly every call of a sequence, and small windows cost
// WINDOW_UPDATE frames.
const (
	streamWindow = 4 << 20
	connWindow   = MaxMessageBytes
)

// ServerOptions are the gRPC options of a plugin's Plugin service: the
// message caps, static windows, and a pool of stream workers, so that a
// call runs on a goroutine whose stack has already grown rather than on a
// new one (a call that finds every worker busy still gets its own).
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.MaxConcurrentStreams(math.MaxUint32),
		grpc.InitialWindowSize(streamWindow), grpc.InitialConnWindowSize(connWindow),
		grpc.NumStreamWorkers(uint32(max(2, runtime.GOMAXPROCS(0)))),
	}
}

// DialOptions are the gRPC options of the host's connection to a plugin:
// the message caps, static windows, and no idle timeout (an agent may not
// call a plugin for hours).
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)),
		grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithIdleTimeout(math.MaxInt64),
	}
}
