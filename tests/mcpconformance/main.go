// Command mcpconformance is the client under test of the official MCP
// conformance suite (@modelcontextprotocol/conformance): the suite starts a
// scenario's server and runs this program with the server's URL as its last
// argument. It connects through tools/mcp as a worker does (the server is an
// MCP_CONFIG entry of type http), then calls every tool the server lists,
// each with arguments made from its input schema (a server that asks for
// input during a call gets an accepted form with its defaults; one behind
// OAuth is signed in to by signIn, which stands for the person), and exits
// 1 when the server did not connect or a call failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpconformance SERVER_URL")
		os.Exit(2)
	}
	if err := run(os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpconformance:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, err := mcp.Connect(ctx, mcp.Config{
		Servers:     []mcp.ServerConfig{{Name: "conf", Type: "http", URL: url, OAuth: oauthFromContext()}},
		CallTimeout: 10 * time.Second,
		Logger:      log,
		SignIn:      signIn,
		RedirectURL: "http://localhost:3000/callback",
	})
	if err != nil {
		return err
	}
	defer m.Close()
	for _, st := range m.Status() {
		if st.Err != nil {
			return fmt.Errorf("server %q did not connect: %w", st.Name, st.Err)
		}
		fmt.Printf("connected; tools: %v\n", st.Tools)
	}
	reg := tools.NewRegistry()
	if err := m.Register(reg); err != nil {
		return err
	}
	var failed []string
	for _, name := range reg.Names() {
		def, _ := reg.Lookup(name)
		if def.Source != tools.SourceMCP {
			continue
		}
		args := argsFor(def.Parameters)
		res, err := def.Handler(tools.WithElicitor(ctx, accept), tools.Request{Tool: name, CallID: "conformance-" + name, Args: args})
		if err != nil {
			failed = append(failed, name)
			fmt.Printf("%s %s: error: %v\n", name, args, err)
			continue
		}
		fmt.Printf("%s %s: %s\n", name, args, res.Content)
	}
	if len(failed) > 0 {
		return fmt.Errorf("calls failed: %v", failed)
	}
	return nil
}

// signIn is the person of the auth scenarios: the suite's authorization
// server signs them in at once and redirects to the callback with the
// code and state, which are read from the redirect without following it.
func signIn(ctx context.Context, req mcp.SignInRequest) (mcp.SignInResult, error) {
	fmt.Printf("sign-in for %s at %s\n", req.Server, req.URL)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
	if err != nil {
		return mcp.SignInResult{}, err
	}
	resp, err := client.Do(r)
	if err != nil {
		return mcp.SignInResult{}, err
	}
	_ = resp.Body.Close()
	loc, err := neturl.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return mcp.SignInResult{}, fmt.Errorf("the authorization server answered %s without a code in its redirect (%q)", resp.Status, resp.Header.Get("Location"))
	}
	q := loc.Query()
	return mcp.SignInResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// oauthFromContext is the entry's "oauth": the client metadata document
// the suite serves, and a pre-registered client where the scenario's
// context (MCP_CONFORMANCE_CONTEXT) gives one.
func oauthFromContext() *mcp.OAuthConfig {
	o := &mcp.OAuthConfig{ClientMetadataURL: "https://conformance-test.local/client-metadata.json"}
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c) == nil && c.ClientID != "" {
		o.ClientID, o.ClientSecret = c.ClientID, c.ClientSecret
	}
	return o
}

// accept answers a server's elicitation as a person who submits the form
// as it stands: accept, with no value of their own, so that the schema's
// defaults fill it (SEP-1034); a url request is accepted too.
func accept(_ context.Context, e tools.Elicitation) (tools.ElicitResult, error) {
	fmt.Printf("elicitation from %s (%s): %s\n", e.Server, e.Mode, e.Message)
	if e.Mode == "url" {
		return tools.ElicitResult{Action: "accept"}, nil
	}
	return tools.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// argsFor makes arguments that satisfy a simple object schema: a value of
// each property's type (numbers count up from 2, so that a sum shows which
// went where).
func argsFor(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	n := 2
	for name, p := range s.Properties {
		switch p.Type {
		case "number", "integer":
			args[name] = n
			n++
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "conformance"
		}
	}
	b, _ := json.Marshal(args)
	return b
}
