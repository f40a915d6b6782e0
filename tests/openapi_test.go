package tests

import "github.com/toolround/toolround/console/openapi/openapitest"

// consoleHosts are the consoles the tests started: every API response the
// tests receive from them (through http.DefaultTransport) is checked
// against the OpenAPI document (X1).
var consoleHosts openapitest.Hosts

func init() { openapitest.Install(consoleHosts.Has) }
