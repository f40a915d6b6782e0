package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
)

// everythingVersion is the MCP reference server whose get-tiny-image tool
// returns a PNG as image content.
const everythingVersion = "2026.8.31"

// everythingServer is the node and the entry point of
// @modelcontextprotocol/server-everything, installed with npm into
// .tools/mcp-everything (scripts/lib.sh's ensure_node_tools installs it
// there too), and the PNG its get-tiny-image tool returns, read from its
// sources.
func everythingServer(t *testing.T) (node, entry string, png []byte) {
	t.Helper()
	node = nodeBin(t)
	dir, err := filepath.Abs(filepath.Join("..", ".tools", "mcp-everything"))
	require.NoError(t, err)
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything")
	if _, err := os.Stat(filepath.Join(pkg, "package.json")); err != nil {
		if out, err := runNPM(t, dir, ".tools/mcp-everything lacks the MCP everything server", "install", "--no-audit", "--no-fund", "--loglevel=error",
			"--prefix", dir, "@modelcontextprotocol/server-everything@"+everythingVersion); err != nil {
			testenv.Unavailable(t, "npm install of the MCP everything server failed: %v\n%s", err, out)
		}
	}
	src, err := os.ReadFile(filepath.Join(pkg, "dist", "tools", "get-tiny-image.js"))
	require.NoError(t, err)
	m := regexp.MustCompile(`MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"`).FindSubmatch(src)
	require.NotNil(t, m, "the server's get-tiny-image.js holds its PNG")
	png, err = base64.StdEncoding.DecodeString(string(m[1]))
	require.NoError(t, err)
	return node, filepath.Join(pkg, "dist", "index.js"), png
}

// everythingEnv is a test environment whose worker's MCP_CONFIG has the
// everything server as "ev" (its tools are mcp_ev_*), and the PNG of its
// get-tiny-image tool; the worker is not started yet.
func everythingEnv(t *testing.T) (e *env, png []byte) {
	t.Helper()
	node, entry, png := everythingServer(t)
	mcpConfig := writeMCPConfig(t, t.TempDir(), map[string]any{"ev": map[string]any{"command": node, "args": []string{entry, "stdio"}}})
	return newEnv(t, "MCP_CONFIG="+mcpConfig), png
}

// TestMCPImagesReachEachFormat runs the MCP everything server's
// get-tiny-image tool in a round of each format through the real worker
// and starter: the PNG arrives unchanged in the call's result and in the
// format's own objects of the messages and the history (F2), and the
// text line stays for a reader of text.
func TestMCPImagesReachEachFormat(t *testing.T) {
	e, png := everythingEnv(t)
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	listed := e.starter(ctx, "", "tools", "--provider", "openai")
	require.Equal(t, 0, listed.code, listed.stderr)
	tool := "mcp_ev_get-tiny-image"
	require.True(t, strings.Contains(listed.stdout, `"`+tool+`"`), "the worker lists no %s", tool)
	b64 := base64.StdEncoding.EncodeToString(png)
	dataURL := "data:image/png;base64," + b64

	head := func(run string) string {
		return fmt.Sprintf(`"session_id":%q,"run_id":%q,"round":1,"provider":"claude-code","auto_approve":true,"state":{"fetched":[%q]}`, e.session, run, tool)
	}
	inputs := map[round.Format]string{
		round.FormatOpenAI: `{` + head("run-openai") + `,"assistant":{"role":"assistant","content":null,
			"tool_calls":[{"id":"call_1","type":"function","function":{"name":"` + tool + `","arguments":"{}"}}]}}`,
		round.FormatAnthropic: `{` + head("run-anthropic") + `,"format":"anthropic","assistant":{"role":"assistant","stop_reason":"tool_use",
			"content":[{"type":"text","text":"A picture."},{"type":"tool_use","id":"toolu_1","name":"` + tool + `","input":{}}]}}`,
		round.FormatResponses: `{` + head("run-responses") + `,"format":"responses","output":[
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"` + tool + `","arguments":"{}","status":"completed"}]}`,
	}
	for _, f := range round.Formats {
		t.Run(string(f), func(t *testing.T) {
			r := e.starter(ctx, inputs[f], "round", "-")
			require.Equal(t, 0, r.code, r.stderr)
			var res round.Result
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
			require.Len(t, res.Results, 1)
			c := res.Results[0]
			require.Equal(t, round.StatusOK, c.Status, c.Content)
			require.Contains(t, c.Content, fmt.Sprintf("[image image/png, %d bytes]", len(png)), "the text line stays")
			require.Len(t, c.Images, 1)
			require.Equal(t, "image/png", c.Images[0].MIMEType)
			require.Equal(t, png, c.Images[0].Data, "the bytes arrive unchanged")
			require.NotEmpty(t, c.Images[0].Ref, "the worker kept them in the blob store")

			var out struct {
				Messages []json.RawMessage `json:"messages"`
				History  []json.RawMessage `json:"history"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
			switch f {
			case round.FormatOpenAI:
				require.Len(t, out.Messages, 1, "one tool message per call (P3.1); the image is its text line (F2)")
				var tm struct {
					Content    string `json:"content"`
					ToolCallID string `json:"tool_call_id"`
				}
				require.NoError(t, json.Unmarshal(out.Messages[0], &tm))
				require.Equal(t, "call_1", tm.ToolCallID)
				require.NotContains(t, tm.Content, b64, "a tool message holds text only")
				require.Contains(t, tm.Content, "[image image/png")
			case round.FormatAnthropic:
				require.Len(t, out.Messages, 1)
				var um struct {
					Content []struct {
						Type      string `json:"type"`
						ToolUseID string `json:"tool_use_id"`
						Content   []struct {
							Type   string `json:"type"`
							Text   string `json:"text"`
							Source struct {
								Type      string `json:"type"`
								MediaType string `json:"media_type"`
								Data      string `json:"data"`
							} `json:"source"`
						} `json:"content"`
					} `json:"content"`
				}
				require.NoError(t, json.Unmarshal(out.Messages[0], &um))
				tr := um.Content[0]
				require.Equal(t, "tool_result", tr.Type)
				require.Equal(t, "toolu_1", tr.ToolUseID)
				require.Len(t, tr.Content, 2)
				require.Equal(t, "text", tr.Content[0].Type)
				require.Contains(t, tr.Content[0].Text, "[image image/png")
				require.Equal(t, "image", tr.Content[1].Type)
				require.Equal(t, "base64", tr.Content[1].Source.Type)
				require.Equal(t, "image/png", tr.Content[1].Source.MediaType)
				require.Equal(t, b64, tr.Content[1].Source.Data)
			case round.FormatResponses:
				require.Len(t, out.Messages, 1)
				var it struct {
					Type   string `json:"type"`
					CallID string `json:"call_id"`
					Output []struct {
						Type     string `json:"type"`
						Text     string `json:"text"`
						ImageURL string `json:"image_url"`
					} `json:"output"`
				}
				require.NoError(t, json.Unmarshal(out.Messages[0], &it))
				require.Equal(t, "function_call_output", it.Type)
				require.Equal(t, "call_1", it.CallID)
				require.Len(t, it.Output, 2)
				require.Equal(t, "input_text", it.Output[0].Type)
				require.Equal(t, "input_image", it.Output[1].Type)
				require.Equal(t, dataURL, it.Output[1].ImageURL)
			}
			last := string(out.History[len(out.History)-1])
			if f == round.FormatOpenAI {
				var tm struct {
					ToolCallID string `json:"tool_call_id"`
				}
				require.NoError(t, json.Unmarshal([]byte(last), &tm))
				require.Equal(t, "call_1", tm.ToolCallID, "the history ends with the tool message")
				require.NotContains(t, last, b64)
			} else {
				require.Contains(t, last, b64, "the history ends with the messages, image and all")
			}
		})
	}
}
