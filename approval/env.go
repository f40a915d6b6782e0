package approval

import (
	"fmt"
	"strings"
)

// EnvAutoApprove is the worker setting that decides whether a round's
// auto_approve counts (T5).
const EnvAutoApprove = "AUTO_APPROVE"

// ParseAutoApprove reads AUTO_APPROVE: "deny" makes the worker ignore the
// auto_approve of every round (Policy.DenyAutoApprove); empty or "allow"
// keeps it. Anything else is an error, so a typo never leaves auto_approve
// on where it was meant to be off.
func ParseAutoApprove(v string) (deny bool, err error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "allow":
		return false, nil
	case "deny":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q: use \"deny\" to ignore auto_approve, or \"allow\" (the default)", EnvAutoApprove, v)
}
