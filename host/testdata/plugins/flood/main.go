// Command flood is a test plugin not built on pluginsdk's Serve: it speaks
// the wire directly, so nothing but the host bounds what it sends. Its
// tools return results of any size in any field (Result), send many
// progress reports (Progress) and ask approval of a request of any size
// (Approve). Run as `flood schema` it also declares a tool whose parameters
// schema is 12 MB (Schema); as `flood description`, a tool whose
// description is 5 MB (Description); as `flood both`, both, whose Describe
// answer is then over the message limit; as `flood reason`, Approve fails
// to load with a 10 MB reason.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

const schema = `{"type":"object","properties":{"bytes":{"type":"integer"},"count":{"type":"integer"},"field":{"type":"string"}}}`

type args struct {
	Bytes int    `json:"bytes"`
	Count int    `json:"count"`
	Field string `json:"field"`
}

type server struct {
	pluginv1.UnimplementedPluginServer
	mode   string
	broker *plugin.GRPCBroker

	mu   sync.Mutex
	id   uint32
	conn *grpc.ClientConn
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	tools := []*pluginv1.ToolSpec{
		{Name: "Result", Description: "Returns BYTES bytes in FIELD: output, lines, message, brief, feedback, image, url or display.", ParametersSchema: schema},
		{Name: "Progress", Description: "Sends COUNT progress reports of BYTES bytes each.", ParametersSchema: schema, Capabilities: []string{pluginrpc.CapProgress}},
		{Name: "Approve", Description: "Asks approval of an edit whose old and new texts are BYTES bytes each.", ParametersSchema: schema, Capabilities: []string{pluginrpc.CapApproval}},
	}
	if s.mode == "schema" || s.mode == "both" {
		big := `{"type":"object","description":"` + strings.Repeat("s", 12<<20) + `"}`
		tools = append(tools, &pluginv1.ToolSpec{Name: "Schema", Description: "A tool with a 12 MB schema.", ParametersSchema: big})
	}
	if s.mode == "description" || s.mode == "both" {
		tools = append(tools, &pluginv1.ToolSpec{Name: "Description", Description: strings.Repeat("d", 5<<20), ParametersSchema: schema})
	}
	return &pluginv1.DescribeResponse{Tools: tools}, nil
}

func (s *server) Load(_ context.Context, req *pluginv1.LoadRequest) (*pluginv1.LoadResponse, error) {
	s.mu.Lock()
	s.id = req.GetCapabilityBrokerId()
	s.mu.Unlock()
	resp := &pluginv1.LoadResponse{}
	for _, name := range req.GetTools() {
		if s.mode == "reason" && name == "Approve" {
			resp.Tools = append(resp.Tools, &pluginv1.ToolLoad{Name: name, Status: pluginv1.ToolLoad_STATUS_FAILED, Reason: strings.Repeat("r", 10<<20)})
			continue
		}
		resp.Tools = append(resp.Tools, &pluginv1.ToolLoad{Name: name, Status: pluginv1.ToolLoad_STATUS_LOADED})
	}
	return resp, nil
}

// host dials the host's capability server once, with go-plugin's default
// options (no message limit of its own).
func (s *server) host() (*grpc.ClientConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		c, err := s.broker.Dial(s.id)
		if err != nil {
			return nil, err
		}
		s.conn = c
	}
	return s.conn, nil
}

func ok(r *pluginv1.ToolOk) *pluginv1.CallResponse {
	return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Ok{Ok: r}}
}

func text(s string) []*pluginv1.ContentPart {
	return []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: s}}}
}

func (s *server) Call(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	var a args
	if err := json.Unmarshal([]byte(req.GetArguments()), &a); err != nil {
		return nil, err
	}
	switch req.GetToolName() {
	case "Result":
		return result(a), nil
	case "Progress":
		conn, err := s.host()
		if err != nil {
			return nil, err
		}
		c := pluginv1.NewProgressClient(conn)
		msg := strings.Repeat("p", a.Bytes)
		failed, last := 0, ""
		for i := range a.Count {
			if _, err := c.Report(ctx, &pluginv1.ProgressReport{ToolCallId: req.GetToolCallId(), Progress: float64(i + 1),
				Total: float64(a.Count), Message: msg}); err != nil {
				failed, last = failed+1, err.Error()
			}
		}
		return ok(&pluginv1.ToolOk{Output: text(fmt.Sprintf("sent %d, %d failed %s", a.Count, failed, last))}), nil
	case "Approve":
		conn, err := s.host()
		if err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]string{"path": "big.json", "old_text": strings.Repeat("a", a.Bytes), "new_text": strings.Repeat("b", a.Bytes)})
		d, err := pluginv1.NewApprovalClient(conn).Request(ctx, &pluginv1.ApprovalRequest{ToolCallId: req.GetToolCallId(),
			Action: "edit", Description: "Edit big.json", Display: []*pluginv1.DisplayBlock{{Kind: "diff", Data: string(data)}}})
		if err != nil {
			return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Error{Error: &pluginv1.ToolError{Message: err.Error()}}}, nil
		}
		return ok(&pluginv1.ToolOk{Output: text(fmt.Sprintf("approved=%v", d.GetApproved()))}), nil
	}
	return nil, fmt.Errorf("no tool %s", req.GetToolName())
}

// result puts a.Bytes bytes in the field a.Field of a result.
func result(a args) *pluginv1.CallResponse {
	big := strings.Repeat("x", a.Bytes)
	r := &pluginv1.ToolOk{}
	switch a.Field {
	case "output":
		r.Output = text(big)
	case "lines":
		line := strings.Repeat("x", 99) + "\n"
		r.Output = text(strings.Repeat(line, a.Bytes/len(line)))
	case "message":
		r.Message = big
	case "brief":
		r.Brief = big
	case "feedback":
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Rejected{Rejected: &pluginv1.ToolRejected{Feedback: big}}}
	case "image":
		r.Output = []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Image{Image: &pluginv1.Image{MimeType: "image/png", Data: []byte(big)}}}}
	case "url":
		r.Output = []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Image{Image: &pluginv1.Image{Url: "data:image/png;base64," + big}}}}
	case "display":
		data, _ := json.Marshal(big)
		r.Display = []*pluginv1.DisplayBlock{{Kind: "brief", Data: string(data)}}
	}
	return ok(r)
}

type flood struct {
	plugin.NetRPCUnsupportedPlugin
	mode string
}

func (f flood) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServer(s, &server{mode: f.mode, broker: broker})
	return nil
}

func (flood) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, fmt.Errorf("plugin side only")
}

func main() {
	tlsCfg, err := pluginrpc.TLSFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	sc := &plugin.ServeConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{pluginrpc.ProtocolVersion: {pluginrpc.PluginName: flood{mode: mode}}},
		// A server with no message limit of its own: whatever it sends, the
		// host's limits are what bound it.
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxSendMsgSize(1<<30), grpc.MaxRecvMsgSize(1<<30))...)
		},
	}
	if tlsCfg != nil {
		sc.TLSProvider = func() (*tls.Config, error) { return tlsCfg, nil }
	}
	plugin.Serve(sc)
}
