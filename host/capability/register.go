package capability

import (
	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// Register registers every capability service of h on s: the server Serve
// runs on go-plugin's broker, and the capability server of a remote tool
// server's connection, where the plugin reaches the host on streams of the
// connection the host opened.
func (h *Host) Register(s *grpc.Server) {
	pluginv1.RegisterApprovalServer(s, approvalServer{h: h})
	pluginv1.RegisterEnvironmentServer(s, environmentServer{h: h})
	pluginv1.RegisterSessionServer(s, sessionServer{h: h})
	pluginv1.RegisterConfigServer(s, configServer{h: h})
	pluginv1.RegisterProgressServer(s, progressServer{h: h})
	pluginv1.RegisterUserInputServer(s, userInputServer{h: h})
	pluginv1.RegisterModelServer(s, modelServer{h: h})
}
