package approval

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func jsonArgs(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func TestFileRules(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"src/**/*.go", "./src/x/a.go", true},
		{"src/**/*.go", "src/x/../a.go", true},
		{"src/**/*.go", "src/../../etc/a.go", false},
		{"src/**/*.go", "/work/src/a.go", false},
		{"src/**/*.go", "src/a.go.bak", false},
		{"src/**/*.go", "lib/a.go", false},
		{"src/*.go", "src/x/a.go", false},
		{"**", "a/b/c", true},
		{"**", "../x", false},
		{"**", "/etc/passwd", false},
		{"**", "~/x", false},
		{"**", "a\\..\\..\\x", false},
		{"**", "", false},
		{"notes.md", "notes.md", true},
		{"notes.md", "NOTES.md", false},
		{"notes.md", "notes.md/../../x", false},
		{"**", ".git/config", false},
		{"**", "sub/.GIT/hooks/pre-commit", false},
		{"**/config", ".git/config", false},
		{".git/info/exclude", ".git/info/exclude", true},
		{"**", ".gitignore", true},
	}
	for _, tt := range tests {
		for _, tool := range []string{"edit_file", "remove_file", "restore_file"} {
			got := matcher([]Rule{{Tool: tool, Pattern: tt.pattern}}, tool, jsonArgs(map[string]any{"path": tt.path, "new_text": "x"}))
			require.Equal(t, tt.want, got, "%s %q ~ %q", tool, tt.pattern, tt.path)
		}
	}
	r := []Rule{{Tool: "read_files", Pattern: "docs/**"}}
	require.True(t, matcher(r, "read_files", `{"paths":["docs/a.md","docs/b/c.md"]}`))
	require.False(t, matcher(r, "read_files", `{"paths":["docs/a.md","src/b.go"]}`), "every path must match")
	require.False(t, matcher(r, "read_files", `{"paths":[]}`))
	require.False(t, matcher(r, "read_files", `{"paths":["docs/a.md"],"path":"x"}`))
	r2 := append(r, Rule{Tool: "read_files", Pattern: "src/*.go"})
	require.True(t, matcher(r2, "read_files", `{"paths":["docs/a.md","src/b.go"]}`), "paths may match different rules")
	require.False(t, matcher([]Rule{{Tool: "edit_file", Pattern: "**"}}, "remove_file", `{"path":"a"}`), "rules are per tool")

	for _, bad := range []string{"", "/etc/*", "../**", "a/../../b", "~/x", "a\\b", "[", "src/{a"} {
		require.Error(t, validateTool("edit_file", bad), "%q", bad)
	}
	require.NoError(t, validateTool("edit_file", "src/**/*.{go,mod}"))
}

func TestHTTPRules(t *testing.T) {
	tests := []struct {
		pattern, method, url string
		want                 bool
	}{
		{"GET https://api.example.com/*", "GET", "https://api.example.com/v1/x", true},
		{"GET https://api.example.com/*", "", "https://api.example.com/v1/x?q=1#f", true},
		{"GET https://api.example.com/*", "get", "HTTPS://API.EXAMPLE.COM/v1", true},
		{"GET https://api.example.com/*", "GET", "https://api.example.com.:443/v1", true},
		{"GET https://api.example.com/*", "GET", "https://api.example.com.evil.net/", false},
		{"GET https://api.example.com/*", "GET", "https://api.example.com@evil.net/", false},
		{"GET https://api.example.com/*", "GET", "https://user:pw@api.example.com/", false},
		{"GET https://api.example.com/*", "GET", "https://api.example.com\\@evil.net/", false},
		{"GET https://api.example.com/*", "GET", "https://evil.net/api.example.com/", false},
		{"GET https://api.example.com/*", "GET", "https://evil.net/?u=https://api.example.com/", false},
		{"GET https://api.example.com/*", "GET", "http://api.example.com/", false},
		{"GET https://api.example.com/*", "GET", "https://api.example.com:8443/", false},
		{"GET https://api.example.com/*", "POST", "https://api.example.com/", false},
		{"GET https://api.example.com/*", "GET", "https://{{secret:H}}/", false},
		{"GET https://api.example.com/*", "GET", "https://[fe80::1%25eth0]/", false},
		{"GET https://api.example.com/*", "GET", "api.example.com/x", false},
		{"GET https://api.example.com/*", "GET", "https:api.example.com/x", false},
		{"GET https://api.example.com/*", "GET", "ftp://api.example.com/x", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/%2e%2e/admin", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/../admin", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/a/../b", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/admin/../v1/x", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/./x", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/%2E/x", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/x/", true},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/a%2Fb", true},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1/%00", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v2/x", false},
		{"GET https://api.example.com/v1/*", "GET", "https://api.example.com/v1", false},
		{"* https://api.example.com/*", "DELETE", "https://api.example.com/x", true},
		{"POST https://api.example.com:8443/items", "post", "https://api.example.com:08443/items", true},
		{"GET http://localhost:80/x", "GET", "http://localhost/x", true},
		{"GET https://*.example.com/*", "GET", "https://a.b.example.com/x", true},
		{"GET https://*.example.com/*", "GET", "https://example.com/x", false},
		{"GET https://*.example.com/*", "GET", "https://evilexample.com/x", false},
		{"GET https://*.example.com/*", "GET", "https://a.example.com.evil.net/x", false},
		{"GET https://[::1]:8080/*", "GET", "https://[::1]:8080/x", true},
	}
	for _, tt := range tests {
		args := map[string]any{"url": tt.url}
		if tt.method != "" {
			args["method"] = tt.method
		}
		got := matcher([]Rule{{Tool: "http_request", Pattern: tt.pattern}}, "http_request", jsonArgs(args))
		require.Equal(t, tt.want, got, "%q ~ %s %q", tt.pattern, tt.method, tt.url)
	}
	require.True(t, matcher([]Rule{{Tool: "fetch_page", Pattern: "GET https://docs.example.com/*"}}, "fetch_page", `{"url":"https://docs.example.com/a"}`))
	require.False(t, matcher([]Rule{{Tool: "http_request", Pattern: "* https://x.com/*"}}, "http_request", `{"url":"https://x.com/","URL":"https://evil/"}`))
	require.False(t, matcher([]Rule{{Tool: "http_request", Pattern: "* https://x.com/*"}}, "http_request", `{"url":"https://x.com/","method":7}`))

	for _, bad := range []string{"", "https://x.com/*", "GET", "GET x.com/*", "GET https://x.com/*?a=1", "GET https://u@x.com/",
		"G3T https://x.com/", "GET https://x*.com/", "GET ftp://x.com/", "GET https://x.com/ extra"} {
		require.Error(t, validateTool("http_request", bad), "%q", bad)
	}
}

func TestDownloadRules(t *testing.T) {
	r := []Rule{{Tool: "download_file", Pattern: "https://example.com/releases/* vendor/**"}}
	args := func(u, p string) string { return jsonArgs(map[string]any{"url": u, "path": p}) }
	require.True(t, matcher(r, "download_file", args("https://example.com/releases/v1.tgz", "vendor/v1.tgz")))
	require.False(t, matcher(r, "download_file", args("https://example.com/releases/v1.tgz", "bin/v1")))
	require.False(t, matcher(r, "download_file", args("https://example.com/other/v1.tgz", "vendor/v1.tgz")))
	require.False(t, matcher(r, "download_file", args("https://example.com/releases/v1.tgz", "vendor/../../x")))
	require.False(t, matcher(r, "download_file", args("https://example.com.evil/releases/v1", "vendor/x")))
	require.True(t, matcher([]Rule{{Tool: "download_file", Pattern: "GET https://example.com/* **"}}, "download_file", args("https://example.com/a", "a")))
	require.Error(t, validateTool("download_file", "POST https://example.com/* **"))
	require.Error(t, validateTool("download_file", "https://example.com/*"))
	require.Error(t, validateTool("download_file", "https://example.com/* /etc/*"))
}

func TestOtherToolPatterns(t *testing.T) {
	require.NoError(t, validateTool("generate_image", "*"))
	require.Error(t, validateTool("generate_image", "cat*"))
}

func TestMatchNeverPanics(t *testing.T) {
	for _, tool := range []string{"run_command", "edit_file", "http_request", "download_file", "x"} {
		for _, args := range []string{"", "null", "{", `{"command":"` + string([]byte{0xff, 0xfe}) + `"}`, `{"path":{}}`, `{"url":"%zz"}`} {
			require.NotPanics(t, func() {
				matchTool([]Rule{{Tool: tool, Pattern: "*"}, {Tool: tool, Pattern: "git *"}, {Tool: tool, Pattern: "GET https://x/*"}}, tool, args)
			})
		}
	}
}
