package registrytest

import (
	"net/http"
	"testing"
)

// TestStart builds (once per machine) and starts the registry; .ci/run
// runs it first so that the build is done before the tests that need it.
func TestStart(t *testing.T) {
	r := Start(t)
	resp, err := http.Get("http://" + r.Host + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/: %s", resp.Status)
	}
	r.Stop()
	if _, err := http.Get("http://" + r.Host + "/v2/"); err == nil {
		t.Fatal("the registry still answers after Stop")
	}
}
