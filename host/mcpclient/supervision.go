package mcpclient

import (
	"context"
	"time"
)

// restart connects anew (for stdio, a new process) for the supervisor, and
// lists the tools again: a restarted server may come back with others.
func (s *Server) restart(ctx context.Context) (*conn, error) {
	sctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	c, err := s.connect(sctx)
	if err != nil {
		return nil, err
	}
	s.requestRelist()
	return c, nil
}

// acquire returns a live connection, restarting the server if it stopped.
func (s *Server) acquire(ctx context.Context) (*conn, error) { return s.sup.Get(ctx) }

// checkDown reports a server that is closed, or down and not to be
// restarted yet, so a call does not ask approval for nothing.
func (s *Server) checkDown() error { return s.sup.Check() }

// fail records that c failed a call as a dead connection does, waiting
// (briefly) for a stdio server's exit to be seen, so that the next call
// restarts it, and returns why it ended.
func (s *Server) fail(c *conn, err error) string {
	if c.pid > 0 {
		t := time.NewTimer(closeGrace)
		select {
		case <-c.done:
		case <-t.C:
		}
		t.Stop()
	}
	c.end(err.Error() + c.stderrSuffix())
	s.sup.Broken(c)
	return c.reason
}
