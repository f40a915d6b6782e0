package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// conformanceConsoleURL is the console's address in the auth/basic-cimd
// scenario: the suite expects the client ID
// https://conformance-test.local/client-metadata.json, which is the
// document of a console whose CONSOLE_URL is this.
const conformanceConsoleURL = "https://conformance-test.local"

// suiteCheck is one check of the suite's checks.json.
type suiteCheck struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

// TestMCPConformanceBasicCIMDThroughTheConsole (E3, issue 48): the
// conformance suite's auth/basic-cimd client scenario, signed in through
// the real console's MCP page. The suite's authorization server advertises
// client_id_metadata_document_supported; the console identifies itself with
// its client ID metadata document, <CONSOLE_URL>/client-metadata.json,
// rather than registering, and the redirect_uri is <CONSOLE_URL>/mcp/callback.
// The suite's verdict: passed, with no warning and no failure.
//
// The suite runs a client command with the scenario's server URL; here that
// command hands the URL to the test and waits, while a worker (MCP_CONFIG
// names the server) lists it as needing a sign-in and a person signs it in
// on the console. The console is reached at CONSOLE_URL through a front the
// test stands for: the person's requests and the authorization server's
// redirect are delivered to the console's listening address.
func TestMCPConformanceBasicCIMDThroughTheConsole(t *testing.T) {
	node, cli := conformanceSuite(t)
	dir := t.TempDir()
	handoff := filepath.Join(dir, "handoff")
	release := filepath.Join(dir, "release")
	require.NoError(t, syscall.Mkfifo(release, 0o600))
	// The client command: hands the server URL over, then waits for the
	// test to say how the sign-in went (its exit status).
	script := filepath.Join(dir, "client.sh")
	require.NoError(t, os.WriteFile(script, []byte(fmt.Sprintf(
		"#!/bin/sh\nprintf '%%s\\n' \"$1\" > %[1]s.tmp && mv %[1]s.tmp %[1]s\nread rc < %[2]s\nexit \"$rc\"\n", handoff, release)), 0o700))

	results := filepath.Join(dir, "results")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	suite := exec.CommandContext(ctx, node, cli, "client", "--command", script, "--scenario", "auth/basic-cimd",
		"--timeout", "180000", "-o", results)
	suite.Dir = dir
	suite.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var log syncBuffer
	suite.Stdout, suite.Stderr = &log, &log
	// The suite, its scenario's servers and the client command are one
	// process group, ended together.
	suite.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	suite.Cancel = func() error { return syscall.Kill(-suite.Process.Pid, syscall.SIGKILL) }
	require.NoError(t, suite.Start())
	var suiteErr error
	suiteDone := make(chan struct{})
	go func() { suiteErr = suite.Wait(); close(suiteDone) }()
	// releaseClient tells the waiting client command its exit status. The
	// FIFO is opened for reading and writing, so that neither side waits
	// for the other to open it and the line stays until the command reads.
	var fifo *os.File
	releaseClient := func(rc int) {
		if fifo != nil {
			return
		}
		f, err := os.OpenFile(release, os.O_RDWR, 0)
		require.NoError(t, err)
		fifo = f
		_, err = fmt.Fprintf(f, "%d\n", rc)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		releaseClient(1)
		cancel()
		<-suiteDone
		_ = fifo.Close()
		if t.Failed() {
			t.Logf("conformance suite:\n%s", log.String())
		}
	})

	var serverURL string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(handoff)
		serverURL = strings.TrimSpace(string(b))
		return err == nil && serverURL != ""
	}, time.Minute, 20*time.Millisecond, "the suite did not start the client:\n%s", log.String())

	name := fmt.Sprintf("cimd%d", time.Now().UnixNano()%1e9)
	bg := context.Background()
	rdb := mcpSignInRedis(t, name)
	mcpConfig := writeMCPConfig(t, dir, map[string]any{name: map[string]any{"url": serverURL}})
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+testKey)
	c := e.startConsoles(1, "CONSOLE_URL="+conformanceConsoleURL)[0]
	w := e.startWorkerBin(workerBin, "MCP_CONFIG="+mcpConfig, "CONSOLE_URL="+conformanceConsoleURL)
	require.Eventually(t, func() bool { return rdb.HExists(bg, "toolround:mcp:signins", name).Val() }, 30*time.Second, 50*time.Millisecond,
		"the worker lists the server as needing a sign-in")

	// The person signs in to the console, starts the sign-in on the MCP
	// page and follows the link to the authorization server.
	person := newPagePerson(t)
	authURL, err := url.Parse(person.startMCPSignIn(c, person.signIn(c, c.approver, "/mcp"), name))
	require.NoError(t, err)
	require.Equal(t, conformanceConsoleURL+"/mcp/callback", authURL.Query().Get("redirect_uri"))

	// The authorization server signs the person in at once and redirects
	// to CONSOLE_URL's callback, which the front hands to the console.
	noFollow := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL.String())
	require.NoError(t, err)
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, conformanceConsoleURL+"/mcp/callback", back.Scheme+"://"+back.Host+back.Path, "redirected to %s", back)
	done := person.get(c.url + back.Path + "?" + back.RawQuery)
	require.Contains(t, done, name+" is signed in")

	// The worker connects the server with the grant.
	waitConnectedAfterSignIn(t, w)

	// The suite's verdict.
	releaseClient(0)
	<-suiteDone
	out := log.String()
	found, err := filepath.Glob(filepath.Join(results, "auth", "basic-cimd-*", "checks.json"))
	require.NoError(t, err)
	require.Len(t, found, 1, out)
	raw, err := os.ReadFile(found[0])
	require.NoError(t, err)
	var checks []suiteCheck
	require.NoError(t, json.Unmarshal(raw, &checks))
	seen := map[string]string{}
	for _, ch := range checks {
		require.NotEqual(t, "WARNING", ch.Status, "check %s warns: %s", ch.ID, ch.Description)
		require.NotEqual(t, "FAILURE", ch.Status, "check %s fails: %s", ch.ID, ch.Description)
		seen[ch.ID] = ch.Status
	}
	for _, id := range []string{"authorization-server-metadata", "authorization-request", "pkce-code-challenge-sent",
		"pkce-verifier-matches-challenge", "token-request", "valid-bearer-token", "cimd-client-id-used"} {
		require.Equal(t, "SUCCESS", seen[id], "check %s: %s", id, out)
	}
	require.NotContains(t, seen, "client-registration", "the console did not register dynamically")
	require.Equal(t, conformanceConsoleURL+"/client-metadata.json", authURL.Query().Get("client_id"), "the console's document is its client ID")
	require.Contains(t, out, "OVERALL: PASSED")
	require.NoError(t, suiteErr, "the suite's exit status:\n%s", out)

	// The console serves its client ID metadata document to anyone (the
	// authorization server fetches it), naming itself by CONSOLE_URL.
	resp, err = http.Get(c.url + "/client-metadata.json")
	require.NoError(t, err)
	var doc struct {
		ClientID                string   `json:"client_id"`
		ClientName              string   `json:"client_name"`
		RedirectURIs            []string `json:"redirect_uris"`
		GrantTypes              []string `json:"grant_types"`
		ResponseTypes           []string `json:"response_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, conformanceConsoleURL+"/client-metadata.json", doc.ClientID)
	require.Equal(t, []string{conformanceConsoleURL + "/mcp/callback"}, doc.RedirectURIs)
	require.Equal(t, "none", doc.TokenEndpointAuthMethod)
}
