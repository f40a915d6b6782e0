package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/tools"
)

func TestHTMLTemplateBuiltins(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		args     string
		contains []string
	}{
		{`{"name":"page","data":{"title":"Hello <World>","paragraphs":["one","<script>alert(1)</script>"]}}`,
			[]string{"<!DOCTYPE html>", "<title>Hello &lt;World&gt;</title>", "<h1>Hello &lt;World&gt;</h1>", "<p>one</p>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>", "</html>"}},
		{`{"name":"page","data":{"title":"T","heading":"H","body":"text"}}`, []string{"<h1>H</h1>", "<p>text</p>"}},
		{`{"name":"list","data":{"title":"Steps","items":["a","b"],"ordered":true}}`, []string{"<ol>", "<li>a</li>", "<li>b</li>"}},
		{`{"name":"list","data":{"title":"Steps","items":["a"]}}`, []string{"<ul>", "<li>a</li>"}},
		{`{"name":"table","data":{"title":"Prices","columns":["item","price"],"rows":[["tea",3],["cake",4.5]],"caption":"EUR"}}`,
			[]string{"<th>item</th><th>price</th>", "<td>tea</td><td>3</td>", "<td>cake</td><td>4.5</td>", "<caption>EUR</caption>"}},
		{`{"name":"report","data":{"title":"R","summary":"S","sections":[{"heading":"A","body":"x","items":["i1"]},{"heading":"B"}]}}`,
			[]string{`<p class="summary">S</p>`, "<h2>A</h2>", "<li>i1</li>", "<h2>B</h2>"}},
		{`{"name":"page","data":{"title":"fr","lang":"fr"}}`, []string{`<html lang="fr">`}},
	}
	for _, tt := range tests {
		t.Run(tt.args[:30], func(t *testing.T) {
			got := e.mustCall(t, "html_template", tools.Request{}, tt.args)
			for _, s := range tt.contains {
				require.Contains(t, got, s)
			}
			require.NotContains(t, got, "<script>")
			require.NotContains(t, got, "<no value>")
		})
	}
}

func TestHTMLTemplateCustom(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		name, template, data, want string
	}{
		{"fields", `<b>{{.name}}</b>`, `{"name":"Ada & Bob"}`, `<b>Ada &amp; Bob</b>`},
		{"attribute escaping", `<a href="{{.url}}" title="{{.t}}">x</a>`, `{"url":"javascript:alert(1)","t":"\"q\""}`, `<a href="#ZgotmplZ" title="&#34;q&#34;">x</a>`},
		{"script context", `<script>var v = {{.v}};</script>`, `{"v":"</script><b>"}`, `<script>var v = "\u003c/script\u003e\u003cb\u003e";</script>`},
		{"range and if", `{{range $i, $x := .xs}}{{if $i}},{{end}}{{$x}}{{end}}`, `{"xs":[1,2,3]}`, `1,2,3`},
		{"integers compare", `{{if eq .n 3}}three{{end}}`, `{"n":3}`, `three`},
		{"floats print plainly", `{{.f}}`, `{"f":2.5}`, `2.5`},
		{"calls the layout", `{{template "head" .}}<p>x</p>{{template "foot" .}}`, `{"title":"T"}`, ""},
		{"own defines", `{{define "row"}}<i>{{.}}</i>{{end}}{{range .xs}}{{template "row" .}}{{end}}`, `{"xs":["a","b"]}`, `<i>a</i><i>b</i>`},
		{"no data", `<p>static</p>`, ``, `<p>static</p>`},
		{"range over an integer", `{{range 3}}x{{end}}`, `{}`, `xxx`},
		{"missing field is empty", `[{{.nothing}}]`, `{}`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"template": tt.template}
			if tt.data != "" {
				args["data"] = jsonRaw(tt.data)
			}
			got := e.mustCall(t, "html_template", tools.Request{}, jsonArgs(t, args))
			if tt.want == "" {
				require.Contains(t, got, "<title>T</title>")
				require.Contains(t, got, "</html>")
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestHTMLTemplateFailures(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) {
		c.MaxTemplateOutput = 2000
		c.TemplateSteps = 5000
		c.MaxTemplateDataBytes = 50_000
	})
	nested := strings.Repeat(`{"c":`, 41) + `{}` + strings.Repeat(`}`, 41)
	bigList := "[" + strings.Repeat("0,", 3000) + "0]"
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"parse error", map[string]any{"template": `{{if}}`}, "cannot parse the template"},
		{"unclosed", map[string]any{"template": `{{range .xs}}`}, "cannot parse the template"},
		{"unknown function", map[string]any{"template": `{{shell "ls"}}`}, `function "shell" not defined`},
		{"runtime error", map[string]any{"template": `{{index .xs 5}}`, "data": map[string]any{"xs": []int{1}}}, "index out of range"},
		{"output cap", map[string]any{"template": `{{range .xs}}<p>{{.}}</p>{{end}}`, "data": map[string]any{"xs": jsonRaw(bigList)}}, "larger than 2000 bytes"},
		{"empty nested loops", map[string]any{"template": `{{range .xs}}{{range $.xs}}{{end}}{{end}}`, "data": map[string]any{"xs": jsonRaw(bigList)}}, "more than 5000 steps"},
		{"range over a huge integer", map[string]any{"template": `{{range 1000000000}}{{end}}`}, "more than 5000 steps"},
		{"branching recursion over nested data", map[string]any{
			"template": `{{define "r"}}{{with .c}}{{template "r" .}}{{template "r" .}}{{end}}{{end}}{{template "r" .}}`,
			"data":     jsonRaw(nested)}, "more than 5000 steps"},
		{"endless recursion", map[string]any{"template": `{{define "r"}}{{template "r"}}{{end}}{{template "r"}}`}, "exceeded maximum template depth"},
		{"data too large", map[string]any{"name": "page", "data": map[string]any{"title": strings.Repeat("x", 60_000)}}, "more than the limit of 50000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.call(t, "html_template", tools.Request{}, jsonArgs(t, tt.args))
			require.Error(t, err, "got %.200s", res.Content)
			require.False(t, strings.HasPrefix(err.Error(), "html_template"), "the failure text adds the name: %s", err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), rangeStepFunc, "internal functions stay hidden")
		})
	}

	def, _ := e.reg.Lookup("html_template")
	for _, c := range []struct{ args, want string }{
		{`{"name":"page","template":"x"}`, "not both"},
		{`{}`, "give name"},
		{`{"name":"nope"}`, `no built-in template "nope"`},
		{`{"name":"page","data":[1]}`, "data must be a JSON object"},
	} {
		_, err := def.Handler(context.Background(), tools.Request{Args: []byte(c.args)})
		require.ErrorContains(t, err, c.want, c.args)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := def.Handler(ctx, tools.Request{Args: []byte(`{"template":"{{range .xs}}{{.}}{{end}}","data":{"xs":[1,2]}}`)})
	require.ErrorIs(t, err, context.Canceled)
}

func TestHTMLTemplateStepsAllowNormalTables(t *testing.T) {
	e := newEnv(t, nil)
	rows := make([][]int, 200)
	for i := range rows {
		rows[i] = make([]int, 20)
	}
	got := e.mustCall(t, "html_template", tools.Request{}, jsonArgs(t, map[string]any{
		"name": "table", "data": map[string]any{"title": "big", "columns": make([]string, 20), "rows": rows},
	}))
	require.Equal(t, 200*20, strings.Count(got, "<td>0</td>"), fmt.Sprintf("%.300s", got))
}

type jsonRaw string

func (j jsonRaw) MarshalJSON() ([]byte, error) { return []byte(j), nil }
