package approval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"
)

// ID is the approval_id of a call that waits for a person (T1): the hex
// SHA-256 of the workflow id, call id, tool name and canonical arguments, each
// length-prefixed so that no two different calls share an encoding. A
// decision that carries another ID is for other arguments and is refused.
func ID(workflowID, callID, tool, canonicalArgs string) string {
	h := sha256.New()
	writeFields(h, "toolround approval v1", workflowID, callID, tool, canonicalArgs)
	return hex.EncodeToString(h.Sum(nil))
}

// IDWithSchema is ID for a user tool's call (Y3): the digest also covers
// the schema hash the round saw, so an approval approves the arguments
// under the schema the person's round checked them against.
func IDWithSchema(workflowID, callID, tool, canonicalArgs, schemaHash string) string {
	h := sha256.New()
	writeFields(h, "toolround approval v1", workflowID, callID, tool, canonicalArgs, "schema", schemaHash)
	return hex.EncodeToString(h.Sum(nil))
}

// writeFields writes each field as its 8-byte big-endian length and bytes.
func writeFields(h hash.Hash, fields ...string) {
	var n [8]byte
	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
}

// WaitID names one wait of a call (B1): the hex SHA-256 of its approval
// id, the wait's kind and its sequence in the call (1 for the first). A
// decision that carries another wait's id is refused.
func WaitID(approvalID, kind string, seq int) string {
	h := sha256.New()
	writeFields(h, "toolround wait v1", approvalID, kind, strconv.Itoa(seq))
	return hex.EncodeToString(h.Sum(nil))
}
