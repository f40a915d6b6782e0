package approval

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// UsageMAC is the MAC of a run's usage (B1) for session and run, keyed
// with the rule key: usage is the canonical encoding of the counts, without
// their MAC. Counts that a client lowered, a limit it grew, or the usage of
// another run fail VerifyUsage.
func UsageMAC(key []byte, session, run string, usage []byte) string {
	h := hmac.New(sha256.New, key)
	writeFields(h, "toolround usage v1", session, run, string(usage))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// VerifyUsage reports whether mac is UsageMAC of usage for session and
// run; never when key is not a KeySize-byte key or mac is empty.
func VerifyUsage(key []byte, session, run string, usage []byte, mac string) bool {
	if len(key) != KeySize || mac == "" {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil {
		return false
	}
	want, _ := base64.RawURLEncoding.DecodeString(UsageMAC(key, session, run, usage))
	return hmac.Equal(got, want)
}

// RoundUsageMAC is the MAC of a run's usage (B1, B2) for session, run and
// the round that hands it on (T15), keyed with the rule key: only the run's
// next round takes it, so a client cannot send an earlier round's counts
// again. usage is the canonical encoding of the counts, without their MAC.
func RoundUsageMAC(key []byte, session, run string, round int, usage []byte) string {
	h := hmac.New(sha256.New, key)
	writeFields(h, "toolround usage v2", session, run, strconv.Itoa(round), string(usage))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// VerifyRoundUsage reports whether mac is RoundUsageMAC of usage for
// session, run and round; never when key is not a KeySize-byte key or mac
// is empty.
func VerifyRoundUsage(key []byte, session, run string, round int, usage []byte, mac string) bool {
	if len(key) != KeySize || mac == "" {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil {
		return false
	}
	want, _ := base64.RawURLEncoding.DecodeString(RoundUsageMAC(key, session, run, round, usage))
	return hmac.Equal(got, want)
}
