package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
)

const secretNamePattern = `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`

var secretName = regexp.MustCompile(secretNamePattern)

func (t *toolset) storeSecret() tools.Definition {
	return tools.Definition{
		Name: tools.StoreSecret,
		Description: "Store a credential (API key, token, password) for this session, encrypted. " +
			"The value is never shown again: use it as {{secret:NAME}} in http_request headers or body. " +
			"Call it when a tool says a credential is missing or was refused and the user gave you one.",
		Parameters: tools.SchemaOf(tools.Object(map[string]*tools.JSONSchema{
			"name":  {Description: "the secret's name, e.g. GITHUB_TOKEN", Pattern: secretNamePattern, Type: "string"},
			"value": {Description: "the secret value", MaxLength: tools.Ptr(t.cfg.MaxSecretChars), MinLength: tools.Ptr(1), Type: "string"},
		}, "name", "value")),
		Concurrent: false,
		SideEffect: tools.AtMostOnce,
		Confirm:    tools.ConfirmNever,
		Timeout:    10 * time.Second,
		Source:     tools.SourceBuiltin,
		// The subject is shown and matched by allow rules: only the name, never the value.
		Subject:   tools.SubjectField("name"),
		Handler:   t.handleStoreSecret,
		Reconcile: t.reconcileStoreSecret,
	}
}

// reconcileStoreSecret decides from the store whether a lost attempt
// stored its secret (SPEC R). Over Redis the value is written together
// with the record of the operation that wrote it, in one script: the
// record found is the effect found. The record absent, the same atomic
// step fences the operation against the lost attempt, whose write is
// that one script: it can no longer store anything, so the effect is
// proven absent. Secrets kept in one worker's memory cannot be seen from
// another worker: unknown. Nothing here names the value.
func (t *toolset) reconcileStoreSecret(ctx context.Context, req tools.Request) (tools.Reconciliation, error) {
	var args struct {
		Name string `json:"name"`
	}
	if err := req.Decode(&args); err != nil || req.OperationID == "" || req.SessionID == "" {
		return tools.Reconciliation{Verdict: tools.VerdictUnknown, Content: "the call has no operation id, session or name to look for"}, nil
	}
	applied, err := t.cfg.Secrets.SettleOp(ctx, req.SessionID, req.OperationID, req.Generation)
	switch {
	case errors.Is(err, secrets.ErrNotSettleable):
		return tools.Reconciliation{Verdict: tools.VerdictUnknown, Content: err.Error()}, nil
	case err != nil:
		return tools.Reconciliation{}, fmt.Errorf("store_secret %s: %w", args.Name, err)
	case applied:
		return tools.Reconciliation{Verdict: tools.VerdictApplied, Content: fmt.Sprintf(
			"stored secret %s (the lost attempt took effect: the store records this operation's write); use it as {{secret:%s}} in http_request headers or body",
			args.Name, args.Name)}, nil
	default:
		return tools.Reconciliation{Verdict: tools.VerdictAbsent, Content: fmt.Sprintf(
			"the store has no write of %s by this operation, and the operation is now fenced against the lost attempt", args.Name)}, nil
	}
}

// The handler's errors name the secret and never hold its value.
func (t *toolset) handleStoreSecret(ctx context.Context, req tools.Request) (tools.Result, error) {
	var args struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if err := req.Decode(&args); err != nil {
		return tools.Result{}, errors.New("arguments must be an object with string fields name and value")
	}
	if err := needSession(req); err != nil {
		return tools.Result{}, err
	}
	if !secretName.MatchString(args.Name) {
		return tools.Result{}, fmt.Errorf("name must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or '_'")
	}
	if args.Value == "" {
		return tools.Result{}, fmt.Errorf("the value of %s is empty", args.Name)
	}
	if len(args.Value) > t.cfg.MaxSecretChars {
		return tools.Result{}, fmt.Errorf("the value of %s is longer than %d characters", args.Name, t.cfg.MaxSecretChars)
	}
	sealed := secrets.IsSealed(args.Value)
	tools.Checkpoint(ctx, "store_secret:before_write")
	err := t.cfg.Secrets.PutOp(ctx, req.SessionID, args.Name, args.Value, req.OperationID, req.Generation)
	if err == nil {
		tools.Checkpoint(ctx, "store_secret:after_write")
	}
	if err != nil {
		if errors.Is(err, secrets.ErrFenced) {
			return tools.Result{}, fmt.Errorf("%s was not stored: %w", args.Name, secrets.ErrFenced)
		}
		if errors.Is(err, secrets.ErrOpen) {
			return tools.Result{}, fmt.Errorf("the sealed value of %s does not open with this worker's key; the client and the workers must use the same %s", args.Name, secrets.EnvKey)
		}
		return tools.Result{}, fmt.Errorf("save %s: %w", args.Name, err)
	}
	msg := fmt.Sprintf("stored secret %s; use it as {{secret:%s}} in http_request headers or body", args.Name, args.Name)
	if !sealed {
		msg += "\nnote: the value passed through the round unsealed, so the round's history holds it in clear; " +
			"clients should seal store_secret arguments (secrets.SealToolCall) before submitting a round"
	}
	if !t.cfg.Secrets.Shared() {
		msg += "\nnote: this worker keeps secrets in memory only; other workers cannot read it"
	}
	return tools.Text(msg), nil
}
