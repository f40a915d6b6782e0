package files

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/netguard"
)

// png is the start of a PNG file, enough for content sniffing.
var png = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 200)...)

// mediaAPI is a scripted OpenAI-compatible media endpoint: it answers
// /images/generations and /audio/speech as the API documents them, in the
// form the test sets, and records what it was asked.
type mediaAPI struct {
	*httptest.Server
	mu       sync.Mutex
	form     string // "b64_json", "url", "error", "big-url", "empty"
	requests []map[string]any
	auth     []string
	images   int // the /img.png fetches
}

func newMediaAPI(t *testing.T) *mediaAPI {
	m := &mediaAPI{form: "b64_json"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/images/generations", func(w http.ResponseWriter, r *http.Request) {
		m.note(r)
		w.Header().Set("Content-Type", "application/json")
		switch m.formNow() {
		case "error":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}`)
		case "url":
			fmt.Fprintf(w, `{"created":1713833628,"data":[{"url":"%s/img.png","revised_prompt":"a cat"}]}`, m.URL)
		case "big-url":
			fmt.Fprintf(w, `{"created":1713833628,"data":[{"url":"%s/big.png"}]}`, m.URL)
		case "empty":
			fmt.Fprint(w, `{"created":1713833628,"data":[]}`)
		default:
			fmt.Fprintf(w, `{"created":1713833628,"data":[{"b64_json":%q}],"output_format":"png","usage":{"total_tokens":100}}`, base64.StdEncoding.EncodeToString(png))
		}
	})
	mux.HandleFunc("GET /img.png", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.images++
		m.mu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	})
	mux.HandleFunc("GET /big.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(bytes.Repeat([]byte{1}, 5000))
	})
	mux.HandleFunc("POST /v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		m.note(r)
		if m.formNow() == "error" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write([]byte("ID3\x04\x00\x00\x00\x00\x00\x00audio-bytes"))
	})
	m.Server = httptest.NewServer(mux)
	t.Cleanup(m.Close)
	return m
}

func (m *mediaAPI) note(r *http.Request) {
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &body)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, body)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
}

func (m *mediaAPI) formNow() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.form
}

func (m *mediaAPI) set(form string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.form = form
}

func (m *mediaAPI) asked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

func mediaEnv(t *testing.T, api *mediaAPI, mod func(*Config)) *env {
	return newEnv(t, func(c *Config) {
		c.Media = MediaConfig{BaseURL: api.URL + "/v1/", APIKey: "sk-test", Model: "m-1", AudioModel: "tts-1"}
		if mod != nil {
			mod(c)
		}
	})
}

func TestGenerateImage(t *testing.T) {
	api := newMediaAPI(t)
	e := mediaEnv(t, api, nil)

	res := e.ok("generate_image", map[string]any{"prompt": "a cat", "path": "art/cat.png", "size": "1024x1024"})
	require.Contains(t, res.Content, "saved art/cat.png")
	require.Contains(t, res.Content, fmt.Sprintf("%d bytes, image/png", len(png)))
	require.Equal(t, []string{"art/cat.png"}, res.Touched)
	got, err := os.ReadFile(filepath.Join(e.dir, "art", "cat.png"))
	require.NoError(t, err)
	require.Equal(t, png, got, "the b64_json answer is decoded into the file")
	require.Equal(t, map[string]any{"model": "m-1", "prompt": "a cat", "n": float64(1), "response_format": "b64_json", "size": "1024x1024"}, api.requests[0])
	require.Equal(t, "Bearer sk-test", api.auth[0])

	// A GPT image model always answers in b64_json and is not asked to.
	g := mediaEnv(t, api, func(c *Config) { c.Media.Model = "gpt-image-1" })
	g.ok("generate_image", map[string]any{"prompt": "a cat", "path": "cat.png"})
	require.NotContains(t, api.requests[len(api.requests)-1], "response_format")
	require.Equal(t, "gpt-image-1", api.requests[len(api.requests)-1]["model"])

	// The URL form: the image is fetched from where the answer says, and the
	// earlier file is kept as a version.
	api.set("url")
	res = e.ok("generate_image", map[string]any{"prompt": "a dog", "path": "art/cat.png"})
	require.Contains(t, res.Content, "saved art/cat.png")
	require.Contains(t, res.Content, "version", "the replaced image is kept: %s", res.Content)
	require.Equal(t, 1, api.images)
	hist := e.ok("file_history", map[string]any{"path": "art/cat.png"})
	require.Contains(t, hist.Content, "generate_image")
}

func TestGenerateImageFailuresSaveNothing(t *testing.T) {
	api := newMediaAPI(t)
	e := mediaEnv(t, api, func(c *Config) { c.Media.MaxBytes = 1000 })
	for _, c := range []struct{ form, want string }{
		{"error", "answered HTTP 400 Bad Request: Your request was rejected as a result of our safety system."},
		{"big-url", "more than the 1000-byte limit; nothing was saved"},
		{"empty", "the answer holds no image"},
	} {
		api.set(c.form)
		_, err := e.call("generate_image", map[string]any{"prompt": "x", "path": "out.png"})
		require.ErrorContains(t, err, c.want, c.form)
		_, statErr := os.Stat(filepath.Join(e.dir, "out.png"))
		require.ErrorIs(t, statErr, os.ErrNotExist, "%s: no file is written", c.form)
	}
	// A path that leaves the workdir is refused before anything is paid for.
	n := api.asked()
	_, err := e.call("generate_image", map[string]any{"prompt": "x", "path": "../out.png"})
	require.Error(t, err)
	_, err = e.call("generate_image", map[string]any{"prompt": "x", "path": "pics/"})
	require.ErrorContains(t, err, "names a folder")
	require.Equal(t, n, api.asked(), "no generation for a path that cannot be written")
}

// The URL of an answer goes through the network guard: a worker that
// denies private addresses does not fetch one on loopback.
func TestGenerateImageURLThroughTheNetworkGuard(t *testing.T) {
	api := newMediaAPI(t)
	e := mediaEnv(t, api, func(c *Config) {
		p := netguard.DefaultPolicy()
		p.DenyPrivate = true
		c.NetPolicy = &p
	})
	api.set("url")
	_, err := e.call("generate_image", map[string]any{"prompt": "x", "path": "out.png"})
	require.ErrorContains(t, err, "fetching the image")
	require.Zero(t, api.images, "the guard refused the loopback address before connecting")
	_, statErr := os.Stat(filepath.Join(e.dir, "out.png"))
	require.ErrorIs(t, statErr, os.ErrNotExist)
}

func TestGenerateAudio(t *testing.T) {
	api := newMediaAPI(t)
	e := mediaEnv(t, api, nil)
	res := e.ok("generate_audio", map[string]any{"text": "hello there", "path": "intro.mp3", "voice": "nova"})
	require.Contains(t, res.Content, "saved intro.mp3")
	require.Contains(t, res.Content, "audio/mpeg")
	got, err := os.ReadFile(filepath.Join(e.dir, "intro.mp3"))
	require.NoError(t, err)
	require.Equal(t, "ID3\x04\x00\x00\x00\x00\x00\x00audio-bytes", string(got))
	require.Equal(t, map[string]any{"model": "tts-1", "input": "hello there", "voice": "nova", "response_format": "mp3"}, api.requests[0])

	api.set("error")
	_, err = e.call("generate_audio", map[string]any{"text": "x", "path": "b.mp3"})
	require.ErrorContains(t, err, "HTTP 401 Unauthorized: Incorrect API key provided. (check MEDIA_API_KEY)")
}

func TestGenerateWithoutAnEndpoint(t *testing.T) {
	e := newEnv(t, nil)
	for _, name := range []string{"generate_image", "generate_audio"} {
		d := e.defs[name]
		require.False(t, d.Concurrent, "C2: %s is serial", name)
		require.Equal(t, tools.AtMostOnce, d.SideEffect, name)
		require.NotNil(t, d.Reconcile, name)
	}
	_, err := e.call("generate_image", map[string]any{"prompt": "x", "path": "a.png"})
	require.ErrorContains(t, err, "the worker has no MEDIA_BASE_URL")
	_, err = e.call("generate_audio", map[string]any{"text": "x", "path": "a.mp3"})
	require.ErrorContains(t, err, "the worker has no MEDIA_BASE_URL")
}

// The file is the effect: a lost attempt that wrote it is applied, one that
// died before writing is proven absent and may run once more, which pays
// for a second generation.
func TestReconcileGenerate(t *testing.T) {
	api := newMediaAPI(t)
	args := `{"prompt":"a cat","path":"cat.png"}`

	e := mediaEnv(t, api, nil)
	_, _, died := e.attempt("generate_image", "wf/run/g1", 0, args, "generate_image:after_write")
	require.True(t, died)
	r := e.reconcile("generate_image", "wf/run/g1")
	require.Equal(t, tools.VerdictApplied, r.Verdict, r.Content)
	require.Equal(t, 1, api.asked())

	e = mediaEnv(t, api, nil)
	_, _, died = e.attempt("generate_image", "wf/run/g2", 0, args, "generate_image:before_write")
	require.True(t, died)
	r = e.reconcile("generate_image", "wf/run/g2")
	require.Equal(t, tools.VerdictAbsent, r.Verdict, r.Content)
	_, err, _ := e.attempt("generate_image", "wf/run/g2", 0, args, "")
	require.ErrorContains(t, err, "handed operation", "the lost attempt may not act now")
	_, err, _ = e.attempt("generate_image", "wf/run/g2", 1, args, "")
	require.NoError(t, err)
	require.Equal(t, 3, api.asked(), "the run the verdict allowed generated again")
	got, err := os.ReadFile(filepath.Join(e.dir, "cat.png"))
	require.NoError(t, err)
	require.Equal(t, png, got)
}
