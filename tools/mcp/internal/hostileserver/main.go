// Command hostileserver is an MCP server over stdio for the mcp package's
// tests that misbehaves: its tools are
//   - hang: never answers, and ignores the client's cancellation;
//   - child: starts a child process that runs on (in the server's process
//     group) and returns its pid;
//   - escape: starts a process that leaves the server's session and
//     process group (setsid) through a shell that exits at once, so that it
//     is nobody's child, and returns its pid;
//   - write: writes a file of the given size in its folder;
//   - pid: returns the server's process id;
//   - fds: lists the server's open descriptors and what they point to.
//
// With HOSTILE_HANG_IF=FILE it never answers the handshake when FILE exists
// as it starts: a server that started once and hangs when started again.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if f := os.Getenv("HOSTILE_HANG_IF"); f != "" {
		if _, err := os.Stat(f); err == nil {
			select {}
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "hostile", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answer."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			select {}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "child", Description: "Start a child process that runs on and return its pid."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "100000")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(cmd.Process.Pid)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "escape", Description: "Start a process that leaves the server's session and return its pid."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			out, err := exec.Command("sh", "-c", "setsid sleep 100000 </dev/null >/dev/null 2>&1 & echo $!").Output()
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimSpace(string(out))}}}, nil, nil
		})
	type writeArgs struct {
		Name  string `json:"name"`
		Bytes int    `json:"bytes"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "write", Description: "Write a file of the given size in the server's folder."},
		func(_ context.Context, _ *sdk.CallToolRequest, a writeArgs) (*sdk.CallToolResult, any, error) {
			if err := os.WriteFile(a.Name, make([]byte, a.Bytes), 0o644); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "written"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "pid", Description: "Return the server's process id."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fds", Description: "List the server's open descriptors."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			entries, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				return nil, nil, err
			}
			var b strings.Builder
			for _, e := range entries {
				target, _ := os.Readlink("/proc/self/fd/" + e.Name())
				fmt.Fprintf(&b, "%s -> %s\n", e.Name(), target)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		log.Fatalf("hostileserver: %v", err)
	}
}
