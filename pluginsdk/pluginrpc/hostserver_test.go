package pluginrpc

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// RegisterHost serves every capability service, wherever the capability
// server runs: a host may offer UserInput and Model to any plugin.
func TestRegisterHostServesEveryCapability(t *testing.T) {
	s := grpc.NewServer()
	t.Cleanup(s.Stop)
	RegisterHost(s, nil)
	got := s.GetServiceInfo()
	for _, d := range []grpc.ServiceDesc{
		pluginv1.Approval_ServiceDesc, pluginv1.Environment_ServiceDesc, pluginv1.Session_ServiceDesc,
		pluginv1.Config_ServiceDesc, pluginv1.Progress_ServiceDesc, pluginv1.UserInput_ServiceDesc,
		pluginv1.Model_ServiceDesc,
	} {
		if _, ok := got[d.ServiceName]; !ok {
			t.Errorf("RegisterHost does not serve %s", d.ServiceName)
		}
	}
	if len(got) != 7 {
		t.Errorf("RegisterHost serves %d services, want the 7 capabilities", len(got))
	}
}
