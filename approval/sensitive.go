package approval

import (
	"path"
	"strings"
)

// sensitiveNames are file names that hold keys and credentials, matched in
// lower case against a path's last element.
var sensitiveNames = []string{
	".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks", "*.ppk", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*_rsa", "*_ed25519", ".netrc", "_netrc", ".npmrc", ".pypirc",
	".pgpass", ".git-credentials", "credentials", "credentials.*", "*credentials*.json", "secrets.*", "*.secret",
	".htpasswd", "shadow", "gshadow", "kubeconfig", "service-account*.json", "authorized_keys", "known_hosts",
	".vault-token", ".dockercfg", "*.token", ".boto", ".s3cfg", "rule.key", "secret.key",
}

// sensitiveDirs are folders whose every file is sensitive, matched in lower
// case as whole path elements.
var sensitiveDirs = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".config/gcloud", ".config/toolround", ".password-store"}

// SensitivePath reports whether a path names keys, credentials or a .env
// file, in any letter case: reading it always asks for confirmation,
// whatever rules, auto_approve or allow_turn say (C4).
func SensitivePath(p string) bool {
	p = path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	lower := strings.ToLower(p)
	base := path.Base(lower)
	for _, pat := range sensitiveNames {
		if ok, _ := path.Match(pat, base); ok {
			return true
		}
	}
	lower += "/"
	for _, d := range sensitiveDirs {
		if strings.Contains(lower, "/"+d+"/") {
			return true
		}
	}
	return false
}
