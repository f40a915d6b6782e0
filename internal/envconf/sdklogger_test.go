package envconf

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSDKLoggerDemotesInfo: the SDK's INFO lines are written at DEBUG (and
// dropped at LOG_LEVEL=info); its WARN and ERROR lines stay, fields and
// With included.
func TestSDKLoggerDemotesInfo(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var b bytes.Buffer
		l := SDKLogger(slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: level})))
		l.Info("Started Worker", "TaskQueue", "q")
		l.Warn("poll failed", "error", "x")
		l.Error("task failed")
		l.Debug("details")
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if level == slog.LevelInfo {
			require.Len(t, lines, 2, b.String())
			require.Contains(t, lines[0], `"level":"WARN"`)
			require.Contains(t, lines[0], `"error":"x"`)
			require.Contains(t, lines[1], `"level":"ERROR"`)
			continue
		}
		require.Len(t, lines, 4, b.String())
		require.Contains(t, lines[0], `"level":"DEBUG","msg":"Started Worker","TaskQueue":"q"`)
		require.Contains(t, lines[1], `"level":"WARN"`)
	}
}
