package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

// builtinRegistry is every built-in tool, registered as catalogsnap does.
func builtinRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	wd, err := tools.OpenWorkdir(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { wd.Close() })
	reg := tools.NewRegistry()
	b, err := Register(reg, Config{Workdir: wd, SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return reg
}

// TestBuiltinErrorsDoNotStartWithTheToolName: the failure line names the
// tool once ("tool=<name> failed: ..."); a built-in's own error must not
// repeat it. Each tool's handler runs with arguments it refuses, and no Go
// file of the tools writes an error that starts with a built-in's name.
func TestBuiltinErrorsDoNotStartWithTheToolName(t *testing.T) {
	reg := builtinRegistry(t)
	names := reg.Names()
	require.NotEmpty(t, names)
	for _, name := range names {
		def, ok := reg.Lookup(name)
		require.True(t, ok)
		for _, args := range []string{`{}`, `{"path":7,"paths":7,"url":7,"command":7,"query":7,"items":7,"name":7,"id":7}`} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := def.Handler(ctx, tools.Request{CallID: "c1", OperationID: "wf/run/c1", Args: json.RawMessage(args)})
			cancel()
			if err != nil {
				require.False(t, strings.HasPrefix(err.Error(), name+": "), "%s with %s: %q repeats the tool's name", name, args, err)
			}
		}
	}

	var quoted []string
	for _, n := range names {
		quoted = append(quoted, regexp.QuoteMeta(n))
	}
	prefixed := regexp.MustCompile(`(?:Errorf|errors\.New)\("(?:` + strings.Join(quoted, "|") + `): `)
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, loc := range prefixed.FindAllIndex(src, -1) {
			found = append(found, fmt.Sprintf("%s:%d", path, 1+strings.Count(string(src[:loc[0]]), "\n")))
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "errors that start with their tool's name; FailureContent adds it")
}
