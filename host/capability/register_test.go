package capability

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// A remote tool server's capability server offers every service the
// broker's does: Offered may name UserInput and Model to either.
func TestRegisterServesEveryCapability(t *testing.T) {
	s := grpc.NewServer()
	t.Cleanup(s.Stop)
	(&Host{Plugin: "p"}).Register(s)
	got := s.GetServiceInfo()
	for _, d := range []grpc.ServiceDesc{
		pluginv1.Approval_ServiceDesc, pluginv1.Environment_ServiceDesc, pluginv1.Session_ServiceDesc,
		pluginv1.Config_ServiceDesc, pluginv1.Progress_ServiceDesc, pluginv1.UserInput_ServiceDesc,
		pluginv1.Model_ServiceDesc,
	} {
		if _, ok := got[d.ServiceName]; !ok {
			t.Errorf("Register does not serve %s", d.ServiceName)
		}
	}
}
