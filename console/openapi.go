package console

import (
	"net/http"

	"github.com/toolround/toolround/console/openapi"
)

// getOpenAPI serves the API's OpenAPI 3.1 document (X1). It needs no
// token: it tells what the API is, nothing about its rounds.
func getOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openapi.JSON)
}
