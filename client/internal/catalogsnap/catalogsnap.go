// Package catalogsnap builds the snapshot of the built-in tools' schemas that
// the client embeds, so that client.Tools needs no worker, workdir or Redis.
package catalogsnap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/builtin"
)

// Build registers the built-in tools as a worker does (with a throwaway
// workdir and key, no Redis) and returns their specs as indented JSON, in
// name order.
func Build() ([]byte, error) {
	dir, err := os.MkdirTemp("", "toolround-catalog-")
	if err != nil {
		return nil, fmt.Errorf("catalogsnap: %w", err)
	}
	defer os.RemoveAll(dir)
	wd, err := tools.OpenWorkdir(dir)
	if err != nil {
		return nil, fmt.Errorf("catalogsnap: %w", err)
	}
	defer wd.Close()
	reg := tools.NewRegistry()
	b, err := builtin.Register(reg, builtin.Config{Workdir: wd, SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("catalogsnap: %w", err)
	}
	defer b.Close()
	var specs []tools.FunctionSpec
	for _, d := range reg.Definitions() {
		specs = append(specs, d.Spec())
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(specs); err != nil {
		return nil, fmt.Errorf("catalogsnap: %w", err)
	}
	return buf.Bytes(), nil
}
