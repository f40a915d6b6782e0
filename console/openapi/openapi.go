// Package openapi holds the OpenAPI 3.1 document of the console's HTTP API
// (X1), which the console serves at GET /api/v1/openapi.json and the tests
// validate every API response against.
package openapi

import _ "embed"

// JSON is the document.
//
//go:embed openapi.json
var JSON []byte
