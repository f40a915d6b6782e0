package round

import (
	"fmt"
	"time"

	"github.com/toolround/toolround/internal/text"
	"github.com/toolround/toolround/round/names"
)

// Bounds of the identifiers and the confirm timeout of a round input (T6, T3).
const (
	// MinConfirmTimeout and MaxConfirmTimeout bound confirm_timeout_seconds;
	// 0 keeps the worker's default.
	MinConfirmTimeout = time.Second
	MaxConfirmTimeout = 7 * 24 * time.Hour
)

// checkIdentifier says what is wrong with a session_id or run_id (T6).
func checkIdentifier(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is missing", field)
	}
	if !names.ValidIdentifier(v) {
		return fmt.Errorf("%s %q is not a valid identifier: use 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", field, truncateID(v), names.MaxIdentifierLen)
	}
	return nil
}

// checkConfirmTimeout refuses a confirm timeout outside 1 s .. 7 days (T3),
// before any multiplication could overflow a time.Duration.
func checkConfirmTimeout(seconds int) error {
	if seconds == 0 {
		return nil
	}
	if seconds < int(MinConfirmTimeout/time.Second) || seconds > int(MaxConfirmTimeout/time.Second) {
		return fmt.Errorf("confirm_timeout_seconds is %d; it must be between %d and %d (7 days), or absent for the worker's default",
			seconds, int(MinConfirmTimeout/time.Second), int(MaxConfirmTimeout/time.Second))
	}
	return nil
}

// validateIdentifiers applies T6 and the T3 bounds to an input.
func (in *Input) validateIdentifiers() error {
	if err := checkIdentifier("session_id", in.SessionID); err != nil {
		return err
	}
	if err := checkIdentifier("run_id", in.RunID); err != nil {
		return err
	}
	return checkConfirmTimeout(in.ConfirmTimeoutSeconds)
}

// truncateID keeps an error message short whatever the input held, without
// splitting a character.
func truncateID(v string) string {
	const max = 64
	if len(v) > max {
		return text.Cut(v, max) + "..."
	}
	return v
}
