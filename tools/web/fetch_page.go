package web

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolround/toolround/approval"
	txt "github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/decision"
)

var fetchPageSchema = tools.Schema(`{
  "type": "object",
  "properties": {
    "url": {"type": "string", "minLength": 1, "maxLength": 8192,
      "description": "Absolute http:// or https:// URL of the page."},
    "query": {"type": "string", "maxLength": 2000,
      "description": "What you are looking for on the page. Only the parts relevant to it are returned; without it, the start of the page is."}
  },
  "required": ["url"],
  "additionalProperties": false
}`)

type fetchPageArgs struct {
	URL   string `json:"url"`
	Query string `json:"query"`
}

func (w *web) fetchPageDef() tools.Definition {
	return tools.Definition{
		Name: "fetch_page",
		Description: "Fetch a web page and return its readable text (title, main content, links), " +
			"trimmed to the parts relevant to query. Pages are cached for 30 minutes; " +
			"call again with another query to see other parts of the same page.",
		Parameters:     fetchPageSchema,
		Concurrent:     true,
		SideEffect:     tools.ReadOnly,
		Subject:        tools.SubjectField("url"),
		Rules:          approval.KindURL,
		ConcurrencyKey: tools.HostKey("url"),
		KeyLimit:       w.cfg.HostConcurrency,
		KeyLimitFor:    w.hostLimit,
		Timeout:        w.cfg.Timeout + filterAllowance,
		Source:         tools.SourceBuiltin,
		Handler:        tools.Typed(w.fetchPage),
	}
}

func (w *web) fetchPage(ctx context.Context, req tools.Request, a fetchPageArgs) (tools.Result, error) {
	rawURL := strings.TrimSpace(a.URL)
	origin := rawURL
	u, err := w.client.checkURL(rawURL)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", origin, err)
	}
	u.Fragment = ""
	key := tools.FetchPageCacheKey(u.String())
	if w.cfg.Tenant != nil {
		if t := w.cfg.Tenant(tools.SessionFrom(ctx)); t != "" {
			key = tools.FetchPageCacheKeyOf(t, u.String())
		}
	}

	text, cached := "", false
	if w.cfg.Cache != nil {
		text, cached = w.cacheGet(ctx, key)
	}
	if !cached {
		text, err = w.loadPage(ctx, u)
		if err != nil {
			return tools.Result{}, fmt.Errorf("%s: %w", origin, err)
		}
		// K3: the unfiltered text is cached, shared by every session of
		// the tenant (K4).
		if w.cfg.Cache != nil {
			w.cacheSet(ctx, key, text)
		}
	}
	note := ""
	if cached {
		note = "[from cache: fetched within the last 30 minutes]\n"
	}
	return tools.Text(w.present(ctx, a.Query, text, note)), nil
}

// loadPage downloads a page and renders it as the cached text: a header
// paragraph (title, URL), the readable text, then the links.
func (w *web) loadPage(ctx context.Context, u *url.URL) (string, error) {
	hreq, err := http.NewRequest(http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return "", err
	}
	hreq.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := w.client.exchange(ctx, hreq, w.cfg.MaxPageBytes, nil)
	if err != nil {
		msg, transient := w.client.describe(ctx, err)
		err = fmt.Errorf("%s", msg)
		if transient {
			err = tools.Transient(err)
		}
		return "", err
	}
	if resp.code >= 400 {
		err := fmt.Errorf("%s: %s", resp.status, excerpt(resp, 300, nil))
		if retryableStatus(resp.code) {
			err = tools.Transient(err)
		}
		return "", err
	}
	final, err := url.Parse(resp.finalURL)
	if err != nil {
		final = u
	}
	ct := resp.header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	var title, body string
	var links []link
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || (mt == "" && looksLikeHTML(resp.body)):
		p, err := readable(resp.body, ct, final, w.cfg.MaxLinks)
		if err != nil {
			return "", err
		}
		title, body, links = p.title, p.text, p.links
	default:
		text, cut, binary := bodyText(resp)
		if binary {
			return "", fmt.Errorf("not a web page but %s; save it with download_file", strings.TrimPrefix(binarySummary(resp, false), "[binary body not shown: "))
		}
		body = tidy(text[:cut])
	}

	var b strings.Builder
	if title == "" {
		title = "(none)"
	}
	fmt.Fprintf(&b, "Title: %s\nURL: %s\n\n", title, final.String())
	body = strings.TrimSpace(body)
	if body == "" {
		body = "(the page has no readable text; it may need JavaScript)"
	}
	if len(body) > w.cfg.MaxPageTextBytes {
		body = txt.Cut(body, w.cfg.MaxPageTextBytes) + fmt.Sprintf("\n\n[the page text goes on past %d bytes and was cut]", w.cfg.MaxPageTextBytes)
	} else if resp.truncated {
		body += fmt.Sprintf("\n\n[the page is larger than %d bytes; only its start was read]", w.cfg.MaxPageBytes)
	}
	b.WriteString(body)
	if len(links) > 0 {
		b.WriteString("\n\nLinks:")
		for _, l := range links {
			if l.text == "" {
				fmt.Fprintf(&b, "\n- %s", l.url)
			} else {
				fmt.Fprintf(&b, "\n- %s: %s", l.text, l.url)
			}
		}
	}
	return b.String(), nil
}

func looksLikeHTML(b []byte) bool {
	return strings.HasPrefix(http.DetectContentType(b), "text/html")
}

// present trims cached or fresh text with the decision model (K3): the
// header paragraph stays, the rest is filtered for query. note, if any,
// goes first.
func (w *web) present(ctx context.Context, query, text, note string) string {
	header, rest, _ := strings.Cut(text, "\n\n")
	filtered, err := w.cfg.Decision.Filter(ctx, strings.TrimSpace(query), rest)
	if err != nil {
		w.cfg.Logger.WarnContext(ctx, "web: decision filter failed; using the extractive filter", "err", err)
		filtered, _ = decision.Extractive{}.Filter(ctx, query, rest)
	}
	var b strings.Builder
	b.WriteString(note)
	b.WriteString(header)
	b.WriteString("\n\n")
	b.WriteString(filtered)
	return b.String()
}
