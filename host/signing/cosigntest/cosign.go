// Package cosigntest builds the real cosign command-line tool from the Go
// module proxy (by host/testcomponent) for tests that check what
// kosong-host signs is what cosign verifies.
package cosigntest

import (
	"testing"

	"github.com/kosong-host/kosong-host/host/testcomponent"
)

// Module and Version are the cosign built for the tests.
const (
	Module  = "github.com/sigstore/cosign/v3"
	Version = "v3.1.3"
)

// Need returns the path of the cosign binary, built once per machine; it
// skips the test (fails under CI) when cosign cannot be built.
func Need(t testing.TB) string {
	t.Helper()
	return testcomponent.Need(t, Module, Version, "cmd/cosign", "cosign")
}
