package text

import "errors"

// RootMessage is the message of err's innermost error: what is left when
// every wrapping (Temporal's activity and workflow errors, fmt's %w) is
// taken off.
func RootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
