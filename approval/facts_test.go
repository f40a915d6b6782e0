package approval

// The built-ins' facts as their definitions give them (tools.Definition:
// Rules, Reason, ReadsPaths), for the tests that name tools.
var builtinKinds = map[string]Kind{
	"run_command": KindCommand, "background_command": KindCommand,
	"edit_file": KindPath, "remove_file": KindPath, "restore_file": KindPath, "read_files": KindPath, "file_history": KindPath,
	"http_request": KindRequest, "fetch_page": KindURL, "download_file": KindDownload,
}

var builtinReasons = map[string]string{
	"run_command":        "it runs a shell command",
	"background_command": "it starts or stops a background command",
	"edit_file":          "it changes {path}",
	"remove_file":        "it removes {path}",
	"restore_file":       "it restores an earlier version of {path}",
	"download_file":      "it downloads to {path}",
}

func kindOf(tool string) Kind { return builtinKinds[tool] }

// withFacts is c with the facts of its tool's definition.
func withFacts(c Call) Call {
	c.Kind = kindOf(c.Tool)
	c.Reason = builtinReasons[c.Tool]
	c.ReadsPaths = c.Tool == "read_files"
	return c
}

func needsTool(c Call, p Policy) Verdict { return Needs(withFacts(c), p) }

// The tests written before T11 read the legacy matcher (TablesLegacy),
// which rounds recorded before it still replay with; tables_test.go reads
// TablesV2, and runs the refusals of these tests with it too.
var testTables = TablesLegacy

func matchTool(rules []Rule, tool, args string) bool {
	return MatchAt(testTables, rules, kindOf(tool), tool, args)
}

func whichTool(rules []Rule, tool, args string) ([]Rule, bool) {
	return WhichAt(testTables, rules, kindOf(tool), tool, args)
}

func validateTool(tool, pattern string) error {
	return ValidatePatternAt(testTables, kindOf(tool), tool, pattern)
}

func rememberTool(tool, args, pattern string) ([]Rule, error) {
	return RememberAt(testTables, kindOf(tool), tool, args, pattern)
}
