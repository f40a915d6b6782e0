// Package workspace is the lifecycle of the sessions' workspaces (W3):
// list them with their sizes, remove one, and tell whether a session has a
// round or an agent run open, which keeps its workspace in use. It reads
// TOOLS_WORKDIR directly, so it runs where that folder is.
package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/toolround/toolround/round/names"
	"github.com/toolround/toolround/tools"
)

// Info is one workspace: its session, folder, size and newest change.
type Info struct {
	Session string `json:"session"`
	Path    string `json:"path"`
	// Bytes is the size of its files, its versions and background output
	// (.toolround) included.
	Bytes int64 `json:"bytes"`
	// Files counts its entries other than folders.
	Files int `json:"files"`
	// Modified is the newest modification time of anything in it.
	Modified time.Time `json:"modified"`
}

// Dir is the folder of session's workspace in workdir.
func Dir(workdir, session string) (string, error) {
	if err := tools.CheckSessionID(session); err != nil {
		return "", err
	}
	return filepath.Join(workdir, tools.SessionsDir, session), nil
}

// List is every workspace of workdir, by session.
func List(workdir string) ([]Info, error) {
	entries, err := os.ReadDir(filepath.Join(workdir, tools.SessionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return []Info{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	out := []Info{}
	for _, e := range entries {
		if !e.IsDir() || tools.CheckSessionID(e.Name()) != nil {
			continue // a removal under way, or not a workspace
		}
		info, err := Usage(workdir, e.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, nil
}

// Usage is the workspace of session; an error wrapping fs.ErrNotExist when
// it has none.
func Usage(workdir, session string) (Info, error) {
	dir, err := Dir(workdir, session)
	if err != nil {
		return Info{}, err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return Info{}, fmt.Errorf("workspace %s: %w", session, err)
	}
	if !fi.IsDir() {
		return Info{}, fmt.Errorf("workspace %s: %s is not a folder: %w", session, dir, fs.ErrNotExist)
	}
	info := Info{Session: session, Path: dir, Modified: fi.ModTime()}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		if fi.ModTime().After(info.Modified) {
			info.Modified = fi.ModTime()
		}
		if !d.IsDir() {
			info.Files++
			if fi.Mode().IsRegular() {
				info.Bytes += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		return Info{}, fmt.Errorf("workspace %s: %w", session, err)
	}
	return info, nil
}

// Remove deletes session's workspace: it is renamed out of the way first,
// so that a call starting meanwhile gets a new, empty workspace rather than
// a half-removed one. The caller checks that the session is not in use
// (OpenWorkflows).
func Remove(workdir, session string) error {
	dir, err := Dir(workdir, session)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", session, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace %s: %s is not a folder", session, dir)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	trash := filepath.Join(workdir, tools.SessionsDir, ".removing-"+session+"-"+hex.EncodeToString(b))
	if err := os.Rename(dir, trash); err != nil {
		return fmt.Errorf("workspace %s: %w", session, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("workspace %s: removing %s: %w", session, trash, err)
	}
	return nil
}

// Lister lists the ids of open workflows that a visibility query matches.
type Lister interface {
	Open(ctx context.Context, query string) ([]string, error)
}

// OpenWorkflows lists the session's open rounds and agent runs (at most a
// few): while there is one, its workspace is in use and is neither removed
// nor expired (W3).
func OpenWorkflows(ctx context.Context, l Lister, session string) ([]string, error) {
	if !names.ValidIdentifier(session) {
		return nil, fmt.Errorf("workspace: %q is not a session id", session)
	}
	var out []string
	for _, q := range []struct{ typ, prefix string }{
		{names.WorkflowName, names.SessionRoundsPrefix(session)},
		{names.AgentWorkflowName, names.SessionAgentsPrefix(session)},
	} {
		// A session id holds no quote (ValidIdentifier).
		ids, err := l.Open(ctx, fmt.Sprintf("WorkflowType = '%s' AND WorkflowId STARTS_WITH '%s' AND ExecutionStatus = 'Running'", q.typ, q.prefix))
		if err != nil {
			return nil, fmt.Errorf("workspace %s: listing its open workflows: %w", session, err)
		}
		for _, id := range ids {
			if s, ok := names.SessionOfWorkflowID(id); ok && s == session {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// TemporalLister lists through a Temporal client, one page of a few ids.
func TemporalLister(tc tclient.Client, namespace string) Lister {
	return temporalLister{tc, namespace}
}

type temporalLister struct {
	tc        tclient.Client
	namespace string
}

func (t temporalLister) Open(ctx context.Context, query string) ([]string, error) {
	resp, err := t.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: t.namespace, PageSize: 10, Query: query})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range resp.GetExecutions() {
		ids = append(ids, e.GetExecution().GetWorkflowId())
	}
	return ids, nil
}

// BusyError says which workflows keep a workspace in use.
type BusyError struct {
	Session string
	Open    []string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("workspace %s is in use: %s is open", e.Session, strings.Join(e.Open, ", "))
}
