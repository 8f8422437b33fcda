package mcpclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kosong-host/kosong-host/host/spec"
)

// Configs are the MCP servers of an agent: its spec's `mcp_servers`, then
// those of each MCP config file (--mcp-config-file). A name given twice is
// an error.
func Configs(s *spec.Spec, files []string) ([]spec.MCPServer, error) {
	lists := [][]spec.MCPServer{s.MCPServers}
	for _, f := range files {
		l, err := spec.LoadMCPConfig(f)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	return spec.MergeMCPServers(lists...)
}

// Status is the load outcome of one MCP tool, or of a server that failed.
type Status struct {
	Server string
	// Name is the tool's name in the toolset; "" for a server that failed
	// to start.
	Name string
	// Source is Server.Source.
	Source string
	// Err is why the tool (or the server) is not available; nil when loaded.
	Err error
	// Tool is the tool when loaded.
	Tool *Tool
}

// Loaded are the MCP servers of an agent that started, and the status of
// each tool (and of each server that failed), in configuration order.
type Loaded struct {
	Servers []*Server
	Status  []Status
}

// LoadAll starts the servers in parallel. A server that fails to start or
// to list its tools is reported in Status, never fatal; so is an
// enabled_tools entry the server does not offer.
func LoadAll(ctx context.Context, cfgs []spec.MCPServer, opts Options) *Loaded {
	servers := make([]*Server, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i], errs[i] = Start(ctx, cfg, opts)
		}()
	}
	wg.Wait()
	l := &Loaded{}
	for i, cfg := range cfgs {
		if errs[i] != nil {
			if opts.Logger != nil {
				opts.Logger.Warn("MCP server failed to start", "server", cfg.Name, "error", errs[i])
			}
			l.Status = append(l.Status, Status{Server: cfg.Name, Source: source(cfg), Err: errs[i]})
			continue
		}
		s := servers[i]
		l.Servers = append(l.Servers, s)
		for _, t := range s.Tools() {
			l.Status = append(l.Status, Status{Server: cfg.Name, Name: t.name, Source: s.source, Tool: t})
		}
		offered := s.Offered()
		for _, name := range cfg.EnabledTools {
			if !slices.Contains(offered, name) {
				l.Status = append(l.Status, Status{Server: cfg.Name, Name: cfg.ToolName(name), Source: s.source,
					Err: fmt.Errorf("MCP server %s has no tool %s; it offers %s", cfg.Name, name, strings.Join(offered, ", "))})
			}
		}
	}
	return l
}

// Close stops every server, in parallel.
func (l *Loaded) Close() {
	if l == nil {
		return
	}
	var wg sync.WaitGroup
	for _, s := range l.Servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
	}
	wg.Wait()
}
