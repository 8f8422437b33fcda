package temporaltest

import (
	"context"
	"testing"
	"time"
)

// TestStart builds (once per machine) and starts the development server;
// .ci/run runs it first so that the build is done before the tests that
// need it.
func TestStart(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CheckHealth(ctx, nil); err != nil {
		t.Fatalf("health check: %v", err)
	}
	s.Stop()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if _, err := c.CheckHealth(ctx2, nil); err == nil {
		t.Fatal("the server still answers after Stop")
	}
}
