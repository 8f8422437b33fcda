package fakeapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Post sends body as JSON to path on srv and returns the response with its
// body read, for the fake servers' own tests.
func Post(t testing.TB, srv *httptest.Server, path, body string) (*http.Response, string) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}
