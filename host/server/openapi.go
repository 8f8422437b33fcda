package server

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 document of the API, served at
// GET /v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(OpenAPI)
}
