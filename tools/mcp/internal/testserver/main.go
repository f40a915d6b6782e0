// Command testserver is an MCP server over stdio for the mcp package's
// tests; its tools are those of package fixture.
package main

import (
	"context"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolround/toolround/tools/mcp/internal/testserver/fixture"
)

func main() {
	if err := fixture.New().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatalf("testserver: %v", err)
	}
}
