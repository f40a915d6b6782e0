package tools

import (
	"crypto/sha256"
	"encoding/hex"
)

func hashKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
