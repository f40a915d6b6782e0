// Package preview reads, for a person deciding on a call that overwrites a
// file, the file as it is now (SPEC T14): its size and first lines, read at
// display time by an activity on the workspace's host and never recorded.
//
// The console starts a short workflow of its own (never a session's) that
// runs the activity PreviewFile once on the queue of the host that holds
// the session's workspace. The activity seals what it read to a key the
// console made for this one request and keeps in memory only, so the
// result that the workflow's history keeps until the console deletes the
// execution, right after reading it, is ciphertext.
package preview

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/files"
	"github.com/toolround/toolround/tools/secrets"
)

// ActivityName is the type of the preview activity; a stable string.
const ActivityName = "PreviewFile"

// Input asks for a preview of Path in Session's workspace, sealed to
// PublicKey (X25519, 32 bytes).
type Input struct {
	Session   string `json:"session"`
	Path      string `json:"path"`
	PublicKey []byte `json:"public_key"`
}

// Output is a sealed files.Preview: the activity's ephemeral X25519 public
// key, and the preview's JSON under AES-256-GCM with a key derived from the
// shared secret.
type Output struct {
	PublicKey []byte `json:"public_key"`
	Nonce     []byte `json:"nonce"`
	Sealed    []byte `json:"sealed"`
}

// SecretValues reads a session's stored secrets (secrets.Store does).
type SecretValues interface {
	Names(ctx context.Context, sessionID string) ([]string, error)
	Get(ctx context.Context, sessionID, name string) (string, error)
}

// Activities is the preview activity of a worker.
type Activities struct {
	// Workdir is the worker's TOOLS_WORKDIR.
	Workdir *tools.Workdir
	// Secrets, when set, are redacted from the lines (T9).
	Secrets SecretValues
}

// PreviewFile reads the preview of in.Path in in.Session's workspace on
// this host, redacts the session's stored secrets from its lines and seals
// it to in.PublicKey. A path outside the workspace is refused as edit_file
// refuses it.
func (a *Activities) PreviewFile(ctx context.Context, in Input) (Output, error) {
	peer, err := ecdh.X25519().NewPublicKey(in.PublicKey)
	if err != nil {
		return Output{}, fmt.Errorf("preview: the public key: %w", err)
	}
	p, err := a.read(in.Session, in.Path)
	if err != nil {
		return Output{}, err
	}
	if len(p.Lines) > 0 {
		if p.Lines, err = a.redact(ctx, in.Session, p.Lines); err != nil {
			return Output{}, err
		}
	}
	body, err := json.Marshal(p)
	if err != nil {
		return Output{}, err
	}
	return seal(peer, body)
}

func (a *Activities) read(session, path string) (files.Preview, error) {
	wd := a.Workdir
	if wd == nil {
		return files.Preview{}, errors.New("preview: this worker has no workdir")
	}
	if wd.PerSession() {
		if err := tools.CheckSessionID(session); err != nil {
			return files.Preview{}, err
		}
		// A session without a workspace folder has no file: the preview
		// does not make one.
		if _, err := wd.Root().Lstat(tools.SessionsDir + "/" + session); errors.Is(err, fs.ErrNotExist) {
			return files.Preview{}, nil
		}
		s, err := wd.Session(session)
		if err != nil {
			return files.Preview{}, err
		}
		wd = s
	}
	return files.PreviewFile(wd, path)
}

// redact replaces the session's stored values in the lines with
// [secret:NAME], as the webhook bodies are (notify): a store that does not
// answer fails the preview, so nothing is shown unredacted.
func (a *Activities) redact(ctx context.Context, session string, lines []string) ([]string, error) {
	if a.Secrets == nil || session == "" {
		return lines, nil
	}
	names, err := a.Secrets.Names(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("preview: the session's secrets, to redact the preview: %w", err)
	}
	if len(names) == 0 {
		return lines, nil
	}
	values := make(map[string]string, len(names))
	for _, name := range names {
		v, err := a.Secrets.Get(ctx, session, name)
		if err != nil {
			return nil, fmt.Errorf("preview: the session's secrets, to redact the preview: %w", err)
		}
		values[name] = v
	}
	r := secrets.NewRedactor(values)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = r.Redact(l)
	}
	return out, nil
}

const sealInfo = "toolround preview v1"

func seal(peer *ecdh.PublicKey, body []byte) (Output, error) {
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return Output{}, err
	}
	aead, err := aeadFor(eph, peer)
	if err != nil {
		return Output{}, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return Output{}, err
	}
	return Output{PublicKey: eph.PublicKey().Bytes(), Nonce: nonce, Sealed: aead.Seal(nil, nonce, body, nil)}, nil
}

// Open opens an Output sealed to key.
func Open(key *ecdh.PrivateKey, out Output) (files.Preview, error) {
	peer, err := ecdh.X25519().NewPublicKey(out.PublicKey)
	if err != nil {
		return files.Preview{}, fmt.Errorf("preview: the sealed answer: %w", err)
	}
	aead, err := aeadFor(key, peer)
	if err != nil {
		return files.Preview{}, err
	}
	if len(out.Nonce) != aead.NonceSize() {
		return files.Preview{}, errors.New("preview: the sealed answer does not open")
	}
	body, err := aead.Open(nil, out.Nonce, out.Sealed, nil)
	if err != nil {
		return files.Preview{}, errors.New("preview: the sealed answer does not open")
	}
	var p files.Preview
	if err := json.Unmarshal(body, &p); err != nil {
		return files.Preview{}, fmt.Errorf("preview: the sealed answer: %w", err)
	}
	return p, nil
}

func aeadFor(own *ecdh.PrivateKey, peer *ecdh.PublicKey) (cipher.AEAD, error) {
	shared, err := own.ECDH(peer)
	if err != nil {
		return nil, err
	}
	k, err := hkdf.Key(sha256.New, shared, nil, sealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
