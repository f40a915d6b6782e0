package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/toolround/toolround/approval"
	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
)

type downloadArgs struct {
	URL  string `json:"url"`
	Path string `json:"path"`
}

func (t *fileTools) downloadFileDef() tools.Definition {
	return tools.Definition{
		Name: "download_file",
		Description: "Download a URL (HTTP GET) into a file of the workdir. If path is a folder (or ends with '/'), " +
			"the file takes the URL's last path segment as its name. An existing file is replaced and its " +
			"content kept as a version (restore_file brings it back). " +
			fmt.Sprintf("At most %d bytes, %d redirects and %s per download.", t.cfg.MaxDownloadBytes, t.cfg.MaxRedirects, t.cfg.DownloadTimeout),
		Parameters: tools.Schema(`{
			"type": "object",
			"properties": {
				"url": {"type": "string", "minLength": 1, "description": "http or https URL to download."},
				"path": {"type": "string", "minLength": 1, "description": "Destination file (or folder) relative to the workdir."}
			},
			"required": ["url", "path"],
			"additionalProperties": false
		}`),
		Concurrent:     true,
		SideEffect:     tools.AtMostOnce,
		Timeout:        t.cfg.DownloadTimeout + 30*time.Second,
		Source:         tools.SourceBuiltin,
		Subject:        tools.SubjectField("path"),
		Rules:          approval.KindDownload,
		Reason:         "it downloads to {path}",
		TouchesPath:    true,
		ConcurrencyKey: tools.PathKey("path"),
		KeyLimit:       tools.PathKeyLimit,
		Handler:        t.withOp(tools.Typed(t.downloadFile)),
		Reconcile:      t.reconcile,
	}
}

func (t *fileTools) newClient() *http.Client {
	max := t.cfg.MaxRedirects
	return &http.Client{
		Transport: t.cfg.Transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > max {
				return fmt.Errorf("stopped after %d redirects", max)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("refused a redirect to %s: only http and https are followed", req.URL.Redacted())
			}
			return nil
		},
	}
}

func (t *fileTools) downloadFile(ctx context.Context, req tools.Request, a downloadArgs) (tools.Result, error) {
	u, err := parseURL(a.URL)
	if err != nil {
		return tools.Result{}, err
	}
	shown := u.Redacted()
	tg, err := t.downloadTarget(a.Path, u)
	if err != nil {
		return tools.Result{}, err
	}
	if err := ruleReach(req, a.Path, tg); err != nil {
		return tools.Result{}, err
	}
	// The download is written, kept as a version and renamed into place
	// through the file's folder, opened here (or, if it does not exist yet,
	// made once the server answered), so a symbolic link swapped in
	// meanwhile can redirect none of it.
	name := path.Base(tg.real)
	dir, err := t.openWorkIfThere(tg.real)
	if err != nil {
		return tools.Result{}, err
	}
	if dir != nil {
		defer dir.Close()
		if _, err := dir.fileMode(name); err != nil {
			return tools.Result{}, err
		}
	}

	ctx, cancel := context.WithTimeout(ctx, t.cfg.DownloadTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", shown, err)
	}
	hreq.Header.Set("User-Agent", "toolround-download/1")
	resp, err := t.client.Do(hreq)
	if err != nil {
		return tools.Result{}, t.fetchErr(ctx, shown, err, 0)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tools.Result{}, statusErr(shown, resp)
	}
	if resp.ContentLength > t.cfg.MaxDownloadBytes {
		return tools.Result{}, fmt.Errorf("%s is %d bytes, more than the %d-byte download limit", shown, resp.ContentLength, t.cfg.MaxDownloadBytes)
	}

	if dir == nil {
		if dir, err = t.openWork(tg.real, true); err != nil {
			return tools.Result{}, err
		}
		defer dir.Close()
	}
	mode, err := dir.fileMode(name)
	if err != nil {
		return tools.Result{}, err
	}
	h := sha256.New()
	body := &progressReader{ctx: ctx, r: io.LimitReader(resp.Body, t.cfg.MaxDownloadBytes+1), total: resp.ContentLength}
	src, err := t.wd.Capped(io.TeeReader(body, h)) // WORKSPACE_MAX_BYTES (W3)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", tg.given, err)
	}
	tmp, n, err := dir.writeTemp(src, mode)
	if err != nil {
		if body.err != nil {
			return tools.Result{}, t.fetchErr(ctx, shown, body.err, body.n)
		}
		return tools.Result{}, err
	}
	if n > t.cfg.MaxDownloadBytes {
		_ = dir.remove(tmp)
		return tools.Result{}, fmt.Errorf("%s is more than the %d-byte download limit; nothing was saved", shown, t.cfg.MaxDownloadBytes)
	}

	op := "download_file from " + text.Cut(shown, 300)
	v, err := func() (Version, error) {
		defer t.versions.lock()() // released even if record panics (the activity recovers)
		return t.record(ctx, dir, tg.real, change{Op: op, SHA256: hex.EncodeToString(h.Sum(nil))}, dir.replaceStep(tmp, name))
	}()
	if err != nil && v.N == 0 {
		_ = dir.remove(tmp)
		return tools.Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "download_file: saved %s to %s (%d bytes", shown, tg.given, n)
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		fmt.Fprintf(&b, ", %s", ct)
	}
	b.WriteString(")")
	if final := resp.Request.URL.Redacted(); final != shown {
		fmt.Fprintf(&b, " after redirects to %s", final)
	}
	b.WriteString(versionNote(v))
	if err != nil {
		b.WriteString("\nwarning: " + err.Error())
	}
	return tools.Result{Content: b.String(), Touched: tg.touched()}, nil
}

func parseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("url is missing: give an http or https URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q does not parse: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q is not http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	return u, nil
}

// downloadTarget is the file a download goes to: path, or the URL's file
// name inside path when path is a folder.
func (t *fileTools) downloadTarget(p string, u *url.URL) (target, error) {
	if strings.TrimSpace(p) == "" {
		return target{}, errors.New("path is missing: give the destination file path")
	}
	tg, err := t.resolve(p)
	if err != nil {
		return target{}, err
	}
	folder := strings.HasSuffix(p, "/") || tg.real == "."
	if !folder {
		if fi, err := t.wd.Root().Stat(tg.real); err == nil && fi.IsDir() {
			folder = true
		}
	}
	if !folder {
		return tg, nil
	}
	name := path.Base(u.Path)
	if name == "" || name == "." || name == "/" {
		return target{}, fmt.Errorf("%s is a folder and the URL has no file name; give the destination file path", p)
	}
	return t.resolve(joinRel(tg.given, name))
}

// fetchErr explains a failed request; passing network trouble is transient.
func (t *fileTools) fetchErr(ctx context.Context, shown string, err error, got int64) error {
	var ne net.Error
	received := ""
	if got > 0 {
		received = fmt.Sprintf(" (%d bytes received; nothing was saved)", got)
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tools.Transient(fmt.Errorf("%s: timed out after %s%s", shown, t.cfg.DownloadTimeout, received))
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w%s", shown, ctx.Err(), received)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne) && ne.Timeout():
		return tools.Transient(fmt.Errorf("%s: %w%s", shown, err, received))
	}
	return fmt.Errorf("%s: %w%s", shown, err, received)
}

// statusErr turns a non-2xx response into an error with its status code and
// the start of its body; 429 and 5xx are transient.
func statusErr(shown string, resp *http.Response) error {
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	msg := fmt.Sprintf("GET %s: HTTP %s", shown, resp.Status)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (the server refused access)"
	case http.StatusNotFound:
		msg += " (check the URL)"
	}
	if s := strings.TrimSpace(string(snippet)); s != "" && utf8.ValidString(s) {
		msg += ": " + strings.Join(strings.Fields(s), " ")
	}
	err := errors.New(msg)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return tools.Transient(err)
	}
	return err
}

// progressReader reports download progress about once a megabyte and keeps
// the read error apart from write errors.
type progressReader struct {
	ctx      context.Context
	r        io.Reader
	total    int64
	n        int64
	reported int64
	err      error
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.n-p.reported >= 1<<20 {
		p.reported = p.n
		if p.total > 0 {
			tools.ReportProgress(p.ctx, fmt.Sprintf("downloaded %d of %d bytes", p.n, p.total))
		} else {
			tools.ReportProgress(p.ctx, fmt.Sprintf("downloaded %d bytes", p.n))
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		p.err = err
	}
	return n, err
}
