package web

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// page is the readable form of an HTML document.
type page struct {
	title string
	text  string
	links []link
}

type link struct{ text, url string }

// junk holds elements that carry no readable text. noscript must go: the
// parser keeps its content as raw markup text.
const junk = "script, style, noscript, template, svg, canvas, iframe, object, embed, form button, select, [hidden], [aria-hidden=true]"

// readable turns an HTML document into text. The main content found by
// readability is used when it holds a fair share of the page; otherwise the
// whole body is, so that index pages and listings are not lost.
func readable(body []byte, contentType string, base *url.URL, maxLinks int) (page, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return page{}, fmt.Errorf("decode: %w", err)
	}
	root, err := html.Parse(r)
	if err != nil {
		return page{}, fmt.Errorf("parse HTML: %w", err)
	}
	doc := goquery.NewDocumentFromNode(root)
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if b, err := base.Parse(strings.TrimSpace(href)); err == nil {
			base = b
		}
	}
	p := page{title: oneLine(doc.Find("title").First().Text())}
	if p.title == "" {
		p.title = oneLine(doc.Find("h1").First().Text())
	}
	doc.Find(junk).Remove()
	p.links = links(doc, base, maxLinks)

	full := ""
	if b := doc.Find("body"); b.Length() > 0 {
		full = textOf(b.Nodes[0])
	}
	p.text = full
	if article, err := readability.FromDocument(root, base); err == nil && article.Node != nil {
		main := textOf(article.Node)
		if len(main) >= 2000 || len(main)*4 >= len(full) {
			p.text = main
		}
		if p.title == "" {
			p.title = oneLine(article.Title())
		}
	}
	return p, nil
}

// textOf renders a node as text with blank lines between blocks, headings
// marked with '#' and list items with '-'.
func textOf(n *html.Node) string {
	n = cloneTree(n)
	sel := goquery.NewDocumentFromNode(n)
	for level := 1; level <= 6; level++ {
		sel.Find(fmt.Sprintf("h%d", level)).Each(func(_ int, s *goquery.Selection) {
			prependText(s.Nodes[0], strings.Repeat("#", level)+" ")
		})
	}
	sel.Find("li").Each(func(_ int, s *goquery.Selection) { prependText(s.Nodes[0], "- ") })
	return tidy(render.InnerText(n))
}

func prependText(n *html.Node, text string) {
	n.InsertBefore(&html.Node{Type: html.TextNode, Data: text}, n.FirstChild)
}

// cloneTree copies n and its descendants, detached from n's parent.
func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace, Attr: append([]html.Attribute(nil), n.Attr...)}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.AppendChild(cloneTree(ch))
	}
	return c
}

// links lists the page's distinct http(s) links, resolved against base.
func links(doc *goquery.Document, base *url.URL, maxLinks int) []link {
	var out []link
	seen := map[string]bool{}
	doc.Find("a[href]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		href, _ := s.Attr("href")
		u, err := base.Parse(strings.TrimSpace(href))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return true
		}
		u.Fragment = ""
		abs := u.String()
		if seen[abs] || abs == base.String() {
			return true
		}
		seen[abs] = true
		text := oneLine(s.Text())
		if text == "" {
			text, _ = s.Attr("title")
			text = oneLine(text)
		}
		if len([]rune(text)) > 80 {
			text = string([]rune(text)[:80]) + "…"
		}
		out = append(out, link{text: text, url: abs})
		return len(out) < maxLinks
	})
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// tidy trims the ends of lines and keeps at most one blank line in a row;
// leading space stays, for the indentation of code.
func tidy(s string) string {
	var b strings.Builder
	blank := 0
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, " \t\u00a0\r")
		if strings.TrimSpace(line) == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			if blank > 0 {
				b.WriteString("\n\n")
			} else {
				b.WriteString("\n")
			}
		}
		blank = 0
		b.WriteString(line)
	}
	return b.String()
}
