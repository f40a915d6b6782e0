package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/toolround/toolround/tools"
)

// opsDir holds one lock and one record per operation id of a side-effecting
// file tool (SPEC R). The lock (flock) is held for an attempt's whole life
// and released by the kernel when its process dies, so a free lock proves
// the attempt is over; the record says what the attempt was about to change
// (the intent) and which generation of the operation may still act (the
// fence).
const opsDir = tools.ReservedDir + "/ops"

// absentDigest stands for "no file" in an intent.
const absentDigest = "absent"

// opRecord is an operation's record.
type opRecord struct {
	OperationID string `json:"operation_id"`
	Tool        string `json:"tool"`
	// Path, Before and After are the intent: the workdir-relative file the
	// attempt changes, its digest before and the digest it will have
	// (absentDigest for no file). Multi is set by an attempt that changes
	// several files (a folder removal): a reconciler cannot judge it.
	Path   string `json:"path,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Multi  bool   `json:"multi,omitempty"`
	// Fence: attempts of an older generation must not act. A reconciler
	// that allows a run once more sets it, so that a lost attempt that was
	// not dead after all cannot act beside the new run.
	Fence int `json:"fence,omitempty"`
}

// opLock is an operation's lock, held.
type opLock struct {
	dir  *folder // opsDir
	id   string
	name string // record file, in dir
	f    *os.File
	rec  opRecord
}

type opKey struct{}

// opFiles are the lock and record names of an operation id, in opsDir.
func opFiles(id string) (lock, record string) {
	sum := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(sum[:16])
	return h + ".lock", h + ".json"
}

// errLockHeld is returned when another attempt of the operation holds its
// lock.
var errLockHeld = errors.New("another attempt of this operation holds its lock")

// lockOp takes the operation's lock without waiting and reads its record.
func lockOp(root *os.Root, id string) (*opLock, error) {
	lockName, recName := opFiles(id)
	dir, err := openFolder(root, opsDir, true)
	if err != nil {
		return nil, fmt.Errorf("operation lock: %w", plainErr(err))
	}
	f, err := dir.lockFile(lockName)
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("operation lock: %w", plainErr(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		dir.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLockHeld
		}
		return nil, fmt.Errorf("operation lock: %w", err)
	}
	l := &opLock{dir: dir, id: id, name: recName, f: f}
	data, err := dir.readFile(recName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.rec = opRecord{OperationID: id}
	case err != nil:
		l.release()
		return nil, fmt.Errorf("operation record: %w", plainErr(err))
	default:
		if err := json.Unmarshal(data, &l.rec); err != nil || l.rec.OperationID != id {
			l.release()
			return nil, fmt.Errorf("operation record %s is damaged or belongs to another operation", path.Join(opsDir, recName))
		}
	}
	return l, nil
}

func (l *opLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.dir.Close()
}

// save writes the record through a temporary file and a rename, so a crash
// leaves the old record or the new one.
func (l *opLock) save() error {
	data, err := json.Marshal(l.rec)
	if err != nil {
		return fmt.Errorf("operation record: %w", err)
	}
	if _, err := l.dir.writeAtomic(l.name, bytes.NewReader(data), 0o644); err != nil {
		return fmt.Errorf("operation record: %w", err)
	}
	return nil
}

// withOp runs a side-effecting handler under its operation's lock. An
// attempt that finds the lock held, or the operation fenced against its
// generation, does nothing. Calls without an operation id (direct calls in
// tests) run as they are.
func (t *fileTools) withOp(h tools.Handler) tools.Handler {
	return func(ctx context.Context, req tools.Request) (tools.Result, error) {
		if req.OperationID == "" {
			return h(ctx, req)
		}
		l, err := lockOp(t.wd.Root(), req.OperationID)
		if err != nil {
			return tools.Result{}, fmt.Errorf("%s: did nothing: %w", req.Tool, err)
		}
		defer l.release()
		if l.rec.Fence > req.Generation {
			return tools.Result{}, fmt.Errorf("%s: did nothing: a reconciliation after a lost attempt handed operation %s to a newer run", req.Tool, req.OperationID)
		}
		l.rec.Tool = req.Tool
		return h(context.WithValue(ctx, opKey{}, l), req)
	}
}

// fileDigest is the sha256 of the file at rel, or absentDigest.
func (t *fileTools) fileDigest(rel string) (string, error) {
	w, err := t.openWorkIfThere(rel)
	if err != nil || w == nil {
		return absentDigest, err
	}
	defer w.Close()
	return digestIn(w, path.Base(rel))
}

func digestIn(w *folder, name string) (string, error) {
	sum, absent, err := w.digest(name)
	switch {
	case err != nil:
		return "", plainErr(err)
	case absent:
		return absentDigest, nil
	}
	return sum, nil
}

// record is versions.record with the operation's intent written first and
// the crash test checkpoints around the change. rel is the file name in
// the opened folder w.
func (t *fileTools) record(ctx context.Context, w *folder, rel string, c change, apply func() error) (Version, error) {
	if l, ok := ctx.Value(opKey{}).(*opLock); ok {
		before, err := digestIn(w, path.Base(rel))
		if err != nil {
			return Version{}, fmt.Errorf("operation intent: %w", err)
		}
		after := c.SHA256
		if c.Absent {
			after = absentDigest
		}
		l.rec.Path, l.rec.Before, l.rec.After = rel, before, after
		if err := l.save(); err != nil {
			return Version{}, err
		}
		tools.Checkpoint(ctx, l.rec.Tool+":before_write")
		defer tools.Checkpoint(ctx, l.rec.Tool+":after_write")
	}
	return t.versions.record(w, rel, c, apply)
}

// markMulti records that the attempt changes several files: its outcome
// cannot be reconciled.
func markMulti(ctx context.Context) error {
	if l, ok := ctx.Value(opKey{}).(*opLock); ok {
		l.rec.Multi = true
		return l.save()
	}
	return nil
}

// reconcile is the Reconciler of the side-effecting file tools: with the
// operation's lock free (the lost attempt is over), the workdir tells
// whether its intent took effect.
func (t *fileTools) reconcile(_ context.Context, req tools.Request) (tools.Reconciliation, error) {
	unknown := func(why string) (tools.Reconciliation, error) {
		return tools.Reconciliation{Verdict: tools.VerdictUnknown, Content: why}, nil
	}
	if req.OperationID == "" {
		return unknown("the call has no operation id")
	}
	l, err := lockOp(t.wd.Root(), req.OperationID)
	if errors.Is(err, errLockHeld) {
		return unknown("the lost attempt still holds its operation lock: it may still be running")
	}
	if err != nil {
		return tools.Reconciliation{}, err
	}
	defer l.release()
	rec := l.rec
	switch {
	case rec.Multi:
		return unknown("the lost attempt changed several files; which of them changed is not recorded")
	case rec.Fence > req.Generation:
		return unknown("the operation was already handed to a newer run")
	case rec.Path == "":
		// No intent: the attempt died (or never started) before it changed
		// anything. The fence keeps it from acting if it starts after all.
		return t.runAgain(l, req, "no change was recorded")
	}
	now, err := t.fileDigest(rec.Path)
	if err != nil {
		return tools.Reconciliation{}, fmt.Errorf("%s: reconcile: %w", req.Tool, err)
	}
	switch now {
	case rec.After:
		what := "holds the new content"
		if rec.After == absentDigest {
			what = "is gone"
		}
		return tools.Reconciliation{Verdict: tools.VerdictApplied, Touched: []string{rec.Path},
			Content: fmt.Sprintf("%s: the attempt that was lost took effect: %s %s (found by reconciliation of operation %s; it was not run again)", req.Tool, rec.Path, what, req.OperationID)}, nil
	case rec.Before:
		return t.runAgain(l, req, rec.Path+" is as it was before the attempt")
	default:
		return unknown(rec.Path + " matches neither its content before the attempt nor the content it was to have")
	}
}

// runAgain fences the operation for the next generation and allows one
// more run.
func (t *fileTools) runAgain(l *opLock, req tools.Request, why string) (tools.Reconciliation, error) {
	l.rec.Fence = req.Generation + 1
	l.rec.Path, l.rec.Before, l.rec.After = "", "", ""
	if err := l.save(); err != nil {
		return tools.Reconciliation{}, err
	}
	return tools.Reconciliation{Verdict: tools.VerdictAbsent, Content: why}, nil
}
