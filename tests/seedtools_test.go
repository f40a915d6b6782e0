package tests

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/llm/scripted"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/round/names"
)

// mediaServer is a scripted OpenAI-compatible media endpoint: images in
// the b64_json form, speech as audio bytes.
type mediaServer struct {
	srv            *httptest.Server
	mu             sync.Mutex
	images, speech int
}

var testPNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)

func newMediaServer(t *testing.T) *mediaServer {
	m := &mediaServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/images/generations", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.images++
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"created":1,"data":[{"b64_json":%q}]}`, base64.StdEncoding.EncodeToString(testPNG))
	})
	mux.HandleFunc("POST /v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.speech++
		m.mu.Unlock()
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write([]byte("ID3\x04\x00speech"))
	})
	m.srv = httptest.NewServer(mux)
	t.Cleanup(m.srv.Close)
	return m
}

// seedToolsModel asks for two identical test_tool calls of a failing
// script, an image and a speech file, calls again those whose schema came
// back instead, then answers with every tool message that was a run's,
// joined.
func seedToolsModel(r scripted.Request) (scripted.Turn, error) {
	var results, ran []string
	for _, msg := range r.Messages {
		if msg.Role == "tool" {
			results = append(results, msg.Content)
			if !strings.Contains(msg.Content, "was not loaded yet") {
				ran = append(ran, msg.Content)
			}
		}
	}
	test := map[string]any{"name": "script_check", "input": map[string]any{"n": 1}}
	image := map[string]any{"prompt": "a cat", "path": "pics/cat.png"}
	speech := map[string]any{"text": "hello", "path": "hello.mp3"}
	switch len(results) {
	case 0:
		// The first test_tool call gets its schema (P1.4); the second runs.
		return scripted.Turn{Calls: []scripted.Call{
			modelCall("t1", "test_tool", test), modelCall("t2", "test_tool", test),
			modelCall("g1", "generate_image", image), modelCall("g2", "generate_audio", speech),
		}}, nil
	case 4:
		return scripted.Turn{Calls: []scripted.Call{
			modelCall("t3", "test_tool", test), modelCall("g3", "generate_image", image), modelCall("g4", "generate_audio", speech),
		}}, nil
	default:
		return scripted.Turn{Text: strings.Join(ran, "\n---\n")}, nil
	}
}

// TestTestToolAndMediaThroughTheWorker (G4, G5): through the real worker,
// a scripted agent tests a script_* tool with the same input in two rounds
// (both run, never deduplicated, each reporting the exit code and output of
// the failing script), and generates an image and a speech file into the
// workspace, one generation each.
func TestTestToolAndMediaThroughTheWorker(t *testing.T) {
	media := newMediaServer(t)
	model := newModelServer(t, seedToolsModel, scripted.Options{})
	dir := t.TempDir()
	toolsConfig := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(toolsConfig, []byte(`{"tools":[{"name":"script_check","description":"Check the input.",
		"parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]},
		"command":["sh","-c","echo ran >> runs.txt; echo checked; echo \"bad: $(cat)\" >&2; exit 3"]}]}`), 0o600))
	e := newAgentEnv(t, model, "TOOLS_CONFIG="+toolsConfig,
		"MEDIA_BASE_URL="+media.srv.URL+"/v1", "MEDIA_API_KEY=sk-test", "MEDIA_MODEL=scripted-media")
	r := e.runAgent("--run", "run-1", "--provider", "claude-code", "--auto-approve", "test the checker, draw a cat, say hello")
	require.Equal(t, 0, r.code, r.stderr)
	parts := strings.Split(strings.TrimSpace(r.stdout), "\n---\n")
	require.Len(t, parts, 4, r.stdout)
	for _, p := range parts[:2] {
		require.Contains(t, p, "exit code: 3")
		require.Contains(t, p, "[stdout]\nchecked")
		require.Contains(t, p, `bad: {"n":1}`)
	}
	require.Contains(t, parts[2], "generate_image: saved pics/cat.png (80 bytes, image/png)")
	require.Contains(t, parts[3], "generate_audio: saved hello.mp3 (11 bytes, audio/mpeg)")
	require.Equal(t, 2, countLines(t, filepath.Join(e.workdir, "runs.txt"), "ran"), "both tests ran: a test is never deduplicated")
	img, err := os.ReadFile(filepath.Join(e.workdir, "pics", "cat.png"))
	require.NoError(t, err)
	require.Equal(t, testPNG, img)
	audio, err := os.ReadFile(filepath.Join(e.workdir, "hello.mp3"))
	require.NoError(t, err)
	require.Equal(t, "ID3\x04\x00speech", string(audio))
	media.mu.Lock()
	require.Equal(t, 1, media.images, "one generation")
	require.Equal(t, 1, media.speech, "one generation")
	media.mu.Unlock()

	st := e.agentStatus(names.AgentWorkflowID(e.session, "run-1"))
	require.Equal(t, round.AgentCompleted, st.Status)
}
