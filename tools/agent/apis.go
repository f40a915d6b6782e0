package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolround/toolround/tools"
)

//go:embed data/apis.json
var apisJSON []byte

// PublicAPI is one entry of the public API list.
type PublicAPI struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	BaseURL     string `json:"base_url"`
	// Auth is none, api_key_query, api_key_header, bearer, basic, oauth or
	// token_in_path.
	Auth       string `json:"auth"`
	AuthDetail string `json:"auth_detail,omitempty"`
	Category   string `json:"category"`
	DocsURL    string `json:"docs_url"`
	Example    string `json:"example,omitempty"`
}

var authKinds = map[string]bool{
	"none": true, "api_key_query": true, "api_key_header": true, "bearer": true,
	"basic": true, "oauth": true, "token_in_path": true,
}

type apiList struct {
	apis       []PublicAPI
	categories []string
}

func loadAPIs() (*apiList, error) {
	var apis []PublicAPI
	if err := json.Unmarshal(apisJSON, &apis); err != nil {
		return nil, fmt.Errorf("agent: public API list: %w", err)
	}
	seen := map[string]bool{}
	cats := map[string]bool{}
	for i, a := range apis {
		if a.Name == "" || a.BaseURL == "" || a.Category == "" || a.DocsURL == "" || a.Description == "" {
			return nil, fmt.Errorf("agent: public API list: entry %d (%q) lacks a field", i, a.Name)
		}
		if !authKinds[a.Auth] {
			return nil, fmt.Errorf("agent: public API list: %s has unknown auth %q", a.Name, a.Auth)
		}
		if seen[strings.ToLower(a.Name)] {
			return nil, fmt.Errorf("agent: public API list: %s is listed twice", a.Name)
		}
		seen[strings.ToLower(a.Name)] = true
		cats[a.Category] = true
	}
	l := &apiList{apis: apis}
	for c := range cats {
		l.categories = append(l.categories, c)
	}
	sort.Strings(l.categories)
	return l, nil
}

func (l *apiList) definition() tools.Definition {
	return tools.Definition{
		Name: "public_api_list",
		Description: "Find a public web API for a task (weather, exchange rates, holidays, books, papers, countries, ...): " +
			"name, description, base URL, how it authenticates and its docs. Then call it with http_request. " +
			"Many need no key; for the others, store the key with store_secret and pass {{secret:NAME}}.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"category": {Description: "only this category: " + strings.Join(l.categories, ", "), MaxLength: tools.Ptr(50), Type: "string"},
			"query":    {Description: `words to look for in names and descriptions, e.g. "exchange rates"`, MaxLength: tools.Ptr(200), Type: "string"},
		})),
		Concurrent: true,
		SideEffect: tools.ReadOnly,
		Timeout:    5 * time.Second,
		Source:     tools.SourceBuiltin,
		Handler:    tools.Typed(l.handle),
	}
}

type apiListArgs = struct {
	Query    string `json:"query"`
	Category string `json:"category"`
}

func (l *apiList) handle(_ context.Context, req tools.Request, args apiListArgs) (tools.Result, error) {
	category := strings.ToLower(strings.TrimSpace(args.Category))
	if category != "" && !slices.Contains(l.categories, category) {
		return tools.Result{}, fmt.Errorf("no category %q; categories: %s", args.Category, strings.Join(l.categories, ", "))
	}
	found := l.search(args.Query, category)
	if len(found) == 0 {
		return tools.Text(fmt.Sprintf("no public API matches %q; try fewer or other words, or one of the categories: %s", args.Query, strings.Join(l.categories, ", "))), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d public APIs. Call them with http_request (method GET unless the docs say otherwise). "+
		"For an API with a key, store the key with store_secret and write {{secret:NAME}} where the key goes.\n", len(found))
	for _, a := range found {
		fmt.Fprintf(&b, "\n%s [%s] auth: %s", a.Name, a.Category, a.Auth)
		if a.AuthDetail != "" {
			fmt.Fprintf(&b, " (%s)", a.AuthDetail)
		}
		fmt.Fprintf(&b, "\n  %s\n  base: %s\n  docs: %s", a.Description, a.BaseURL, a.DocsURL)
		if a.Example != "" {
			fmt.Fprintf(&b, "\n  example: %s", a.Example)
		}
		b.WriteString("\n")
	}
	return tools.Text(strings.TrimSuffix(b.String(), "\n")), nil
}

// search ranks entries by how many query words they contain; entries that
// contain none are left out. An empty query lists the whole category.
func (l *apiList) search(query, category string) []PublicAPI {
	words := strings.Fields(strings.ToLower(query))
	type hit struct {
		api   PublicAPI
		score int
	}
	var hits []hit
	for _, a := range l.apis {
		if category != "" && a.Category != category {
			continue
		}
		text := strings.ToLower(strings.Join([]string{a.Name, a.Description, a.Category, a.BaseURL, a.Auth}, " "))
		score := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				score++
				if strings.Contains(strings.ToLower(a.Name), w) {
					score++
				}
			}
		}
		if len(words) > 0 && score == 0 {
			continue
		}
		hits = append(hits, hit{a, score})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := make([]PublicAPI, len(hits))
	for i, h := range hits {
		out[i] = h.api
	}
	return out
}
