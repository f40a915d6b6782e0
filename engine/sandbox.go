package engine

import (
	"fmt"
	"path/filepath"

	"github.com/toolround/toolround/tools/command/sandbox"
	"github.com/toolround/toolround/tools/secrets"
)

// RulesOffNote is what the start line of a worker without a sandbox says of
// remembered rules (T12): none approves a command call.
const RulesOffNote = "no sandbox: rules for commands are off (run_command, background_command and script_* calls ask, whatever rules the run remembered)"

// openSandbox chooses the commands' sandbox mode and says in the log which
// one and why: loudly when SANDBOX=auto found no usable bubblewrap. The
// worker's key files are hidden from commands.
func (e *Engine) openSandbox() (*sandbox.Sandbox, error) {
	cfg := e.Config.Sandbox
	keyFile := e.Config.Secrets.KeyFile
	if keyFile == "" {
		keyFile, _ = secrets.DefaultKeyFile()
	}
	for _, f := range []string{keyFile, e.Config.TLS.KeyFile, e.Config.TLS.CertFile} {
		if f != "" {
			if abs, err := filepath.Abs(f); err == nil {
				cfg.Hide = append(cfg.Hide, abs)
			}
		}
	}
	sb, err := sandbox.New(cfg, e.Workdir.Dir())
	if err != nil {
		return nil, err
	}
	if e.Workdir.PerSession() && sb.Mode() != sandbox.ModeBwrap {
		why := "SANDBOX=none"
		if sb.Fallback() {
			why = fmt.Sprintf("SANDBOX=auto found no usable bubblewrap (%v)", sb.Unusable())
		}
		sb.Close()
		return nil, fmt.Errorf("WORKSPACE=session keeps each session's commands in its own workspace only inside the bubblewrap sandbox, and %s; install bubblewrap and set SANDBOX=auto or bwrap, or use WORKSPACE=shared", why)
	}
	if sb.Fallback() {
		e.Logger.Warn("COMMANDS ARE NOT SANDBOXED: "+sb.Reason()+"; "+RulesOffNote, "sandbox", sb.Mode())
	} else if sb.Mode() != sandbox.ModeBwrap {
		e.Logger.Info("command sandbox: "+RulesOffNote, "sandbox", sb.Mode(), "why", sb.Reason())
	} else {
		e.Logger.Info("command sandbox", "sandbox", sb.Mode(), "why", sb.Reason())
	}
	for _, w := range sb.Warnings() {
		e.Logger.Warn("command sandbox limit", "sandbox", sb.Mode(), "problem", w)
	}
	return sb, nil
}
