// Command elicitserver is an MCP server over stdio whose tools ask the user
// for input during the call (elicitation), for the tests of SPEC E1. It
// speaks every protocol version the SDK does, 2026-07-28 included: its
// tools return input requests (multi round-trip requests), which the SDK
// sends to older clients as elicitation/create requests.
//
//   - book {what}: asks for a date (required) and a number of seats
//     (default 2); accepted, it appends "what date seats" to the file
//     $BOOK_LOG and answers "booked ..."; declined or cancelled, it says so
//     and books nothing;
//   - visit: asks the user to open a URL (url mode) and answers with the
//     action.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type bookArgs struct {
	What string `json:"what" jsonschema:"what to book"`
}

func main() {
	s := sdk.NewServer(&sdk.Implementation{Name: "elicitserver", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "book", Description: "Book something; asks the user for the date and seats."},
		func(_ context.Context, req *sdk.CallToolRequest, in bookArgs) (*sdk.CallToolResult, any, error) {
			got, ok := req.Params.InputResponses["booking"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{
					InputRequests: sdk.InputRequestMap{"booking": &sdk.ElicitParams{
						Mode:    "form",
						Message: "When should " + in.What + " be booked, and for how many?",
						RequestedSchema: &jsonschema.Schema{
							Type:     "object",
							Required: []string{"date"},
							Properties: map[string]*jsonschema.Schema{
								"date":  {Type: "string", Description: "the day, YYYY-MM-DD"},
								"seats": {Type: "integer", Minimum: ptr(1.0), Default: []byte("2")},
							},
						},
					}},
					RequestState: "book:" + in.What,
				}, nil, nil
			}
			if got.Action != "accept" {
				return text("not booked: the user chose " + got.Action), nil, nil
			}
			line := fmt.Sprintf("%s %v %v\n", in.What, got.Content["date"], got.Content["seats"])
			if p := os.Getenv("BOOK_LOG"); p != "" {
				f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return nil, nil, err
				}
				_, err = f.WriteString(line)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return nil, nil, err
				}
			}
			return text(fmt.Sprintf("booked %s on %v for %v", in.What, got.Content["date"], got.Content["seats"])), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "visit", Description: "Ask the user to open a page."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			got, ok := req.Params.InputResponses["page"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{
					InputRequests: sdk.InputRequestMap{"page": &sdk.ElicitParams{
						Mode: "url", Message: "Open this page to sign the form.",
						URL: "https://forms.example.com/sign?id=42", ElicitationID: "sign-42",
					}},
				}, nil, nil
			}
			return text("visit: " + got.Action), nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatalf("elicitserver: %v", err)
	}
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func ptr[T any](v T) *T { return &v }
