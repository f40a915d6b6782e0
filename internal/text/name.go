package text

// PlainName reports whether s is made only of ASCII letters, digits, '.',
// '_' and '-', and starts with a letter or digit: a name that any file
// system keeps as it is and that no path or shell reads specially (session
// folders, host ids). The empty string is not one.
func PlainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
