package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
)

// QueueKey is the key that seals what passes between a round and the tool
// workers of one task queue (Y3): the {{secret:NAME}} values a call sends
// its user tool, and that tool's answer, which may hold them. It is the
// HMAC-SHA256 of "toolround tool secrets v1", a zero byte and the queue's
// name under key. A tool worker is given this key (`starter tool-key
// QUEUE`, TOOLROUND_TOOL_KEY), not key itself, so it opens what was sealed
// for its own queue and nothing else: not the sessions' stored values, nor
// another queue's calls.
func QueueKey(key []byte, queue string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("toolround tool secrets v1\x00"))
	mac.Write([]byte(queue))
	return mac.Sum(nil)
}

// SealFor seals plaintext for the tool workers of queue (QueueKey).
func (s *Store) SealFor(queue, plaintext string) (string, error) {
	return Seal(QueueKey(s.key, queue), plaintext)
}

// OpenFrom opens what a tool worker of queue sealed with its QueueKey,
// also under the previous key's queue key during a rotation.
func (s *Store) OpenFrom(queue, sealed string) (string, error) {
	plain, err := open(QueueKey(s.key, queue), sealed)
	if errors.Is(err, ErrOpen) {
		if previous := previousOf(s.key); previous != nil {
			if p, perr := open(QueueKey(previous, queue), sealed); perr == nil {
				return p, nil
			}
		}
	}
	return plain, err
}
