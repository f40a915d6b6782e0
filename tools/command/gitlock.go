package command

import "strconv"

// gitLockdown is what a command that a rule approved (T4) runs with, after
// the worker's environment, so that git runs no program that its
// repository, global or system configuration names:
//
//   - no system or global configuration (GIT_CONFIG_NOSYSTEM,
//     GIT_CONFIG_GLOBAL=/dev/null), no system attributes;
//   - settings given as on git's command line, which win over every
//     configuration file, the repository's included: no hooks
//     (core.hooksPath=/dev/null), no fsmonitor, ssh for ssh, cat for a
//     pager, no editor, askpass, credential helper or proxy command, no
//     signing programs, no alternate refs command, no attributes file;
//   - safe.bareRepository=explicit: a bare repository that git would find
//     by walking up from a folder (`git -C gd status` where gd was made by
//     `git init --bare gd`) is refused; rules refuse --git-dir, GIT_DIR and
//     --bare, so no rule-approved git uses one;
//   - only the http, https, ssh and git transports (GIT_ALLOW_PROTOCOL): no
//     ext:: or fd:: URL, and no local or file:// repository, whose
//     remote.NAME.uploadpack would run here;
//   - no terminal prompts.
//
// Settings whose names the repository chooses are not overridden: the
// drivers of diff.NAME.command and textconv, filter.NAME.clean, smudge and
// process, merge.NAME.driver, and diff.external (an empty value would make
// every diff fail). They run only when the repository's own config names
// them, which no rule-approved command writes (approval.gitDirFile), and
// which a command run with a rule's scope sees only as a sanitised copy
// that names no program (the sandbox's git fence, T12).
func gitLockdown() []string {
	settings := [][2]string{
		{"safe.bareRepository", "explicit"},
		{"core.hooksPath", "/dev/null"},
		{"core.fsmonitor", "false"},
		{"core.sshCommand", "ssh"},
		{"core.gitProxy", ""},
		{"core.pager", "cat"},
		{"core.editor", "false"},
		{"sequence.editor", "false"},
		{"core.askPass", ""},
		{"core.alternateRefsCommand", ""},
		{"core.attributesFile", "/dev/null"},
		{"credential.helper", ""},
		{"gpg.program", "false"},
		{"gpg.openpgp.program", "false"},
		{"gpg.x509.program", "false"},
		{"gpg.ssh.program", "false"},
		{"gpg.ssh.defaultKeyCommand", "false"},
		{"commit.gpgSign", "false"},
		{"tag.gpgSign", "false"},
		{"push.gpgSign", "false"},
		{"protocol.allow", "never"},
		{"protocol.https.allow", "always"},
		{"protocol.http.allow", "always"},
		{"protocol.ssh.allow", "always"},
		{"protocol.git.allow", "always"},
	}
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"GIT_ALLOW_PROTOCOL=http:https:ssh:git", "GIT_TERMINAL_PROMPT=0", "GIT_PROTOCOL_FROM_USER=0",
		"GIT_CONFIG_COUNT=" + strconv.Itoa(len(settings)),
	}
	for i, s := range settings {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+s[0], "GIT_CONFIG_VALUE_"+n+"="+s[1])
	}
	return env
}

// envFor is the environment of a command: the worker's, and for a command
// that a rule approved the git lockdown after it (a later entry of the same
// name wins, and these names never come from the worker's environment).
func (t *Tools) envFor(ruleApproved bool) []string {
	if !ruleApproved {
		return t.env
	}
	env := make([]string, 0, len(t.env)+64)
	for _, kv := range t.env {
		if !lockedName(kv) {
			env = append(env, kv)
		}
	}
	return append(env, gitLockdown()...)
}

func lockedName(kv string) bool {
	for _, p := range []string{"GIT_", "SSH_ASKPASS="} {
		if len(kv) >= len(p) && kv[:len(p)] == p {
			return true
		}
	}
	return false
}
