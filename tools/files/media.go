package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
)

// MediaConfig is the OpenAI-compatible endpoint of generate_image and
// generate_audio (G5): MEDIA_BASE_URL, MEDIA_API_KEY, MEDIA_MODEL.
type MediaConfig struct {
	// BaseURL is the API's base, such as https://api.openai.com/v1; the
	// tools post to BaseURL/images/generations and BaseURL/audio/speech.
	// Empty: both tools answer that the worker has no media endpoint.
	BaseURL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Model is the model of both tools; ImageModel and AudioModel, when
	// set, replace it for one of them. Defaults gpt-image-1 and
	// gpt-4o-mini-tts.
	Model, ImageModel, AudioModel string
	// MaxBytes caps one generated file, whether it comes in the answer or
	// from the URL the answer gives. Default: MaxDownloadBytes.
	MaxBytes int64
	// Timeout bounds one generation, the URL's fetch included. Default 5
	// minutes.
	Timeout time.Duration
	// Client sends the requests to BaseURL, an address the operator chose.
	// Default: a client with Timeout. A URL in an answer is fetched with
	// download_file's client, through the network guard.
	Client *http.Client
}

func (m MediaConfig) withDefaults(maxDownload int64) MediaConfig {
	m.BaseURL = strings.TrimRight(strings.TrimSpace(m.BaseURL), "/")
	if m.ImageModel == "" {
		m.ImageModel = m.Model
	}
	if m.ImageModel == "" {
		m.ImageModel = "gpt-image-1"
	}
	if m.AudioModel == "" {
		m.AudioModel = m.Model
	}
	if m.AudioModel == "" {
		m.AudioModel = "gpt-4o-mini-tts"
	}
	if m.MaxBytes <= 0 {
		m.MaxBytes = maxDownload
	}
	if m.Timeout <= 0 {
		m.Timeout = 5 * time.Minute
	}
	if m.Client == nil {
		m.Client = &http.Client{Timeout: m.Timeout}
	}
	return m
}

type imageArgs struct {
	Prompt string `json:"prompt"`
	Path   string `json:"path"`
	Size   string `json:"size"`
}

type audioArgs struct {
	Text   string `json:"text"`
	Path   string `json:"path"`
	Voice  string `json:"voice"`
	Format string `json:"format"`
}

// mediaNote is what both descriptions say about cost and repeats.
const mediaNote = "The file is written into the workdir (an existing file is kept as a version, restore_file brings it back). " +
	"Each call is a paid generation: the tools run one at a time, and a call is never repeated unless its lost attempt is proven to have done nothing."

func (t *fileTools) mediaDef(name, description, params, reason string, h tools.Handler) tools.Definition {
	return tools.Definition{
		Name:           name,
		Description:    description + " " + mediaNote,
		Parameters:     tools.Schema(params),
		Concurrent:     false, // C2: serial
		SideEffect:     tools.AtMostOnce,
		Timeout:        t.cfg.Media.Timeout + 30*time.Second,
		Source:         tools.SourceBuiltin,
		Subject:        tools.SubjectField("path"),
		Rules:          approval.KindPath,
		Reason:         reason,
		TouchesPath:    true,
		ConcurrencyKey: tools.PathKey("path"),
		KeyLimit:       tools.PathKeyLimit,
		Handler:        t.withOp(h),
		Reconcile:      t.reconcile, // the file is the effect
	}
}

func (t *fileTools) generateImageDef() tools.Definition {
	return t.mediaDef("generate_image",
		"Generate an image from a text prompt and save it to path (PNG unless the service says otherwise).",
		`{
			"type": "object",
			"properties": {
				"prompt": {"type": "string", "minLength": 1, "maxLength": 32000, "description": "What the image shows."},
				"path": {"type": "string", "minLength": 1, "description": "Destination file relative to the workdir, such as images/cat.png."},
				"size": {"type": "string", "maxLength": 20, "description": "Size such as 1024x1024, if the service offers it."}
			},
			"required": ["prompt", "path"],
			"additionalProperties": false
		}`, "it generates an image into {path}", tools.Typed(t.generateImage))
}

func (t *fileTools) generateAudioDef() tools.Definition {
	return t.mediaDef("generate_audio",
		"Turn text into speech and save the audio to path.",
		`{
			"type": "object",
			"properties": {
				"text": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "The text to speak."},
				"path": {"type": "string", "minLength": 1, "description": "Destination file relative to the workdir, such as audio/intro.mp3."},
				"voice": {"type": "string", "maxLength": 40, "description": "The voice, such as alloy (the default)."},
				"format": {"type": "string", "enum": ["mp3", "opus", "aac", "flac", "wav", "pcm"], "description": "Audio format; default mp3."}
			},
			"required": ["text", "path"],
			"additionalProperties": false
		}`, "it generates audio into {path}", tools.Typed(t.generateAudio))
}

func (t *fileTools) generateImage(ctx context.Context, _ tools.Request, a imageArgs) (tools.Result, error) {
	body := map[string]any{"model": t.cfg.Media.ImageModel, "prompt": a.Prompt, "n": 1}
	// The GPT image models answer in b64_json always and refuse the
	// parameter; the others (dall-e-2, dall-e-3 and compatible servers)
	// give a URL unless asked.
	if !strings.HasPrefix(t.cfg.Media.ImageModel, "gpt-image") {
		body["response_format"] = "b64_json"
	}
	if a.Size != "" {
		body["size"] = a.Size
	}
	return t.generate(ctx, "generate_image", a.Path, "/images/generations", body, t.imageBytes)
}

func (t *fileTools) generateAudio(ctx context.Context, _ tools.Request, a audioArgs) (tools.Result, error) {
	voice, format := a.Voice, a.Format
	if voice == "" {
		voice = "alloy"
	}
	if format == "" {
		format = "mp3"
	}
	body := map[string]any{"model": t.cfg.Media.AudioModel, "input": a.Text, "voice": voice, "response_format": format}
	return t.generate(ctx, "generate_audio", a.Path, "/audio/speech", body, t.audioBytes)
}

// generate asks the endpoint for the file, then writes it to p as
// download_file writes a download: kept as a version, intent first.
func (t *fileTools) generate(ctx context.Context, tool, p, endpoint string, body map[string]any,
	read func(context.Context, *http.Response) ([]byte, string, error)) (tools.Result, error) {
	m := t.cfg.Media
	if m.BaseURL == "" {
		return tools.Result{}, fmt.Errorf("%s needs a media endpoint: the worker has no MEDIA_BASE_URL", tool)
	}
	tg, err := t.resolve(p)
	if err != nil {
		return tools.Result{}, err
	}
	if tg.real == "." || strings.HasSuffix(p, "/") {
		return tools.Result{}, errors.New("path names a folder; give the file to write, such as images/picture.png")
	}
	if dir, err := t.openWorkIfThere(tg.real); err != nil {
		return tools.Result{}, err
	} else if dir != nil {
		_, err := dir.fileMode(path.Base(tg.real))
		dir.Close()
		if err != nil {
			return tools.Result{}, err
		}
	}

	ctx, cancel := context.WithTimeout(ctx, m.Timeout)
	defer cancel()
	payload, err := json.Marshal(body)
	if err != nil {
		return tools.Result{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.BaseURL+endpoint, bytes.NewReader(payload))
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: MEDIA_BASE_URL: %w", tool, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if m.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+m.APIKey)
	}
	tools.ReportProgress(ctx, "waiting for the generation")
	resp, err := m.Client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("%s: no answer from %s within %s", tool, endpoint, m.Timeout)
		}
		return tools.Result{}, fmt.Errorf("%s: %s: %w", tool, endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tools.Result{}, apiErr(tool, endpoint, resp)
	}
	data, mimeType, err := read(ctx, resp)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tool, err)
	}
	if len(data) == 0 {
		return tools.Result{}, fmt.Errorf("%s: the service answered with an empty file; nothing was saved", tool)
	}
	return t.saveGenerated(ctx, tool, tg, data, mimeType)
}

// imageBytes reads an images API answer: {"data": [{"b64_json": ...}]} or
// {"data": [{"url": ...}]}, whose URL is fetched through the network guard.
func (t *fileTools) imageBytes(ctx context.Context, resp *http.Response) ([]byte, string, error) {
	m := t.cfg.Media
	// base64 is 4/3 of the bytes, and the answer carries a little JSON more.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, m.MaxBytes/3*4+64<<10))
	if err != nil {
		return nil, "", fmt.Errorf("reading the answer: %w", err)
	}
	var ans struct {
		Data []struct {
			B64JSON string `json:"b64_json"`
			URL     string `json:"url"`
		} `json:"data"`
		OutputFormat string `json:"output_format"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, "", fmt.Errorf("the answer is not the images API's JSON (or is larger than %d bytes): %v", m.MaxBytes, err)
	}
	if len(ans.Data) == 0 {
		return nil, "", errors.New("the answer holds no image")
	}
	d := ans.Data[0]
	switch {
	case d.B64JSON != "":
		b, err := base64.StdEncoding.DecodeString(d.B64JSON)
		if err != nil {
			return nil, "", fmt.Errorf("the image's b64_json is not base64: %v", err)
		}
		if int64(len(b)) > m.MaxBytes {
			return nil, "", fmt.Errorf("the image is %d bytes, more than the %d-byte limit; nothing was saved", len(b), m.MaxBytes)
		}
		typ := http.DetectContentType(b)
		if ans.OutputFormat != "" && !strings.HasPrefix(typ, "image/") {
			typ = "image/" + ans.OutputFormat
		}
		return b, typ, nil
	case d.URL != "":
		return t.fetchGenerated(ctx, d.URL)
	}
	return nil, "", errors.New("the answer's image has neither b64_json nor url")
}

// fetchGenerated gets an image the service left at a URL, as download_file
// would: through the network guard, within the size cap.
func (t *fileTools) fetchGenerated(ctx context.Context, raw string) ([]byte, string, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, "", fmt.Errorf("the answer's image url: %w", err)
	}
	shown := u.Redacted()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	hreq.Header.Set("User-Agent", "toolround-media/1")
	resp, err := t.client.Do(hreq)
	if err != nil {
		return nil, "", fmt.Errorf("fetching the image at %s: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", fmt.Errorf("fetching the image: %w", statusErr(shown, resp))
	}
	b, err := readCapped(resp.Body, t.cfg.Media.MaxBytes)
	if err != nil {
		return nil, "", fmt.Errorf("the image at %s: %w", shown, err)
	}
	typ := contentType(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(typ, "image/") {
		typ = http.DetectContentType(b)
	}
	return b, typ, nil
}

// audioBytes reads a speech API answer: the audio itself.
func (t *fileTools) audioBytes(_ context.Context, resp *http.Response) ([]byte, string, error) {
	b, err := readCapped(resp.Body, t.cfg.Media.MaxBytes)
	if err != nil {
		return nil, "", fmt.Errorf("the audio: %w", err)
	}
	typ := contentType(resp.Header.Get("Content-Type"))
	if typ == "" || typ == "application/octet-stream" {
		typ = http.DetectContentType(b)
	}
	if typ == "application/json" {
		return nil, "", errors.New("the service answered with JSON, not audio: " + text.Cut(strings.Join(strings.Fields(string(b)), " "), 300))
	}
	return b, typ, nil
}

func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading it: %w; nothing was saved", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("it is more than the %d-byte limit; nothing was saved", limit)
	}
	return b, nil
}

func contentType(h string) string {
	t, _, err := mime.ParseMediaType(h)
	if err != nil {
		return ""
	}
	return t
}

// apiErr is a failed generation: the API's error message when it gives one
// ({"error": {"message": ...}}), else the start of the body.
func apiErr(tool, endpoint string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	msg := fmt.Sprintf("%s: %s answered HTTP %s", tool, endpoint, resp.Status)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		msg += ": " + text.Cut(e.Error.Message, 500)
	} else if s := strings.TrimSpace(string(raw)); s != "" && utf8.ValidString(s) {
		msg += ": " + text.Cut(strings.Join(strings.Fields(s), " "), 300)
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check MEDIA_API_KEY)"
	}
	return errors.New(msg + "; nothing was saved")
}

// saveGenerated writes the file, kept as a version with the operation's
// intent recorded first, so that the reconciler can tell a lost attempt's
// effect from its absence.
func (t *fileTools) saveGenerated(ctx context.Context, tool string, tg target, data []byte, mimeType string) (tools.Result, error) {
	dir, err := t.openWork(tg.real, true)
	if err != nil {
		return tools.Result{}, err
	}
	defer dir.Close()
	name := path.Base(tg.real)
	mode, err := dir.fileMode(name)
	if err != nil {
		return tools.Result{}, err
	}
	src, err := t.wd.Capped(bytes.NewReader(data)) // WORKSPACE_MAX_BYTES (W3)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tg.given, err)
	}
	tmp, n, err := dir.writeTemp(src, mode)
	if err != nil {
		return tools.Result{}, err
	}
	sum := sha256.Sum256(data)
	v, err := func() (Version, error) {
		defer t.versions.lock()() // released whichever way record ends
		return t.record(ctx, dir, tg.real, change{Op: tool, SHA256: hex.EncodeToString(sum[:])}, dir.replaceStep(tmp, name))
	}()
	if err != nil && v.N == 0 {
		_ = dir.remove(tmp)
		return tools.Result{}, err
	}
	content := fmt.Sprintf("%s: saved %s (%d bytes, %s)%s", tool, tg.given, n, mimeType, versionNote(v))
	if err != nil {
		content += "\nwarning: " + err.Error()
	}
	return tools.Result{Content: content, Touched: tg.touched()}, nil
}
