// Package toolworker serves a program's own Go functions as toolround tools
// (SPEC Y1): each function runs as a Temporal activity on a task queue of
// the program's own, and a round schedules it there with every promise it
// keeps for the worker's built-in tools (Y3).
//
// The package also holds the wire (Y1a, Y2) that the Python and TypeScript
// tool workers speak too: the activity type of a tool, its input and result
// envelopes, and the announcement a tool worker sends at start.
//
//	lookup := toolworker.New("lookup_order", func(ctx context.Context, call toolworker.Call, a struct {
//		ID string `json:"id" jsonschema:"the order's id"`
//	}) (any, error) {
//		return orders.Get(ctx, a.ID)
//	}, toolworker.ReadOnly())
//	err := toolworker.Serve(ctx, temporalClient, "orders", []toolworker.Tool{lookup}, toolworker.Options{})
package toolworker

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The names on the wire.
const (
	// ActivityPrefix + a tool's name is the activity type of the tool.
	ActivityPrefix = "toolround.tool."
	// ReconcilePrefix + a tool's name is the activity type of its
	// reconciliation, for a side-effecting tool that declares one (R).
	ReconcilePrefix = "toolround.reconcile."
	// CatalogWorkflowType is the workflow that holds one queue's tools.
	CatalogWorkflowType = "UserToolCatalog"
	// CatalogIDPrefix + a task queue is the id of that queue's catalog.
	CatalogIDPrefix = "usertools/"
	// AnnounceUpdate is the update a tool worker announces its tools by.
	AnnounceUpdate = "announce"
	// ToolsQuery answers a catalog's Catalog.
	ToolsQuery = "tools"
	// WireVersion is the "v" of every envelope.
	WireVersion = 1
	// MaxResultBytes bounds a result's JSON: a larger one is an error
	// result (ErrorResultTooLarge), never a failed activity.
	MaxResultBytes = 1 << 20
)

// The error codes a tool worker answers with.
const (
	// ErrorSchemaChanged: the tool's schema is not the one the round saw
	// in pass 1, so the function did not run (Y3).
	ErrorSchemaChanged = "schema_changed"
	// ErrorInvalidArguments: the arguments did not decode into the tool's
	// type, so the function did not run.
	ErrorInvalidArguments = "invalid_arguments"
	// ErrorToolError: the function returned a *ToolError without a code.
	ErrorToolError = "tool_error"
	// ErrorResultTooLarge: the result's JSON passed MaxResultBytes.
	ErrorResultTooLarge = "result_too_large"
	// ErrorBadResult: the result could not be written as JSON.
	ErrorBadResult = "bad_result"
	// ErrorSecretsUnavailable: the call sends secrets, and the tool worker
	// holds no key that opens them (TOOLROUND_TOOL_KEY), so the function
	// did not run.
	ErrorSecretsUnavailable = "secrets_unavailable"
)

// Effect is a tool's side-effect class.
type Effect string

const (
	// EffectReadOnly tools change nothing: they are retried, may be cached,
	// and on a trusted queue skip approval.
	EffectReadOnly Effect = "read_only"
	// EffectSideEffect tools get one attempt and an operation id; a lost
	// attempt is unknown_outcome unless the tool reconciles it.
	EffectSideEffect Effect = "side_effect"
)

// CallInput is the one argument of a tool's activity (Y1a).
type CallInput struct {
	V    int    `json:"v"`
	Tool string `json:"tool"`
	// ArgsJSON is the call's canonical arguments, as a JSON string.
	ArgsJSON string `json:"args_json"`
	// OperationID is the call's idempotency key, for side-effecting tools.
	OperationID string `json:"operation_id"`
	CallID      string `json:"call_id"`
	WorkflowID  string `json:"workflow_id"`
	// SchemaHash is the schema the round saw in pass 1: a tool worker
	// whose schema for the tool differs refuses the call.
	SchemaHash string `json:"schema_hash"`
	Attempt    int32  `json:"attempt"`
	// Secrets are the values of the {{secret:NAME}} placeholders the
	// call's arguments hold, by name, each sealed with the queue's key
	// (secrets.QueueKey). A tool worker opens them, puts them in the
	// arguments' strings, and seals its answer (CallResult.Sealed, or a
	// failure's message) with the same key, so that no value enters
	// history (Y3, T9). Absent when the call sends none.
	Secrets map[string]string `json:"secrets,omitempty"`
}

// Item is one piece of a result's content: text, JSON or an image.
type Item struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	JSON     json.RawMessage `json:"json,omitempty"`
	Data     string          `json:"data,omitempty"` // an image's base64
	MIMEType string          `json:"mime_type,omitempty"`
}

// CallResult is the result of a tool's activity (Y1a).
type CallResult struct {
	V         int    `json:"v"`
	Content   []Item `json:"content"`
	IsError   bool   `json:"is_error"`
	ErrorCode string `json:"error_code,omitempty"`
	// Attempt is the activity attempt that answered, from 1, when the
	// tool worker says (the round reports it as the call's attempts).
	Attempt int32 `json:"attempt,omitempty"`
	// Sealed, for a call that sent secrets, is the whole result (this
	// envelope's JSON, without Sealed) sealed with the queue's key; the
	// round opens it and redacts the values before it keeps it.
	Sealed string `json:"sealed,omitempty"`
}

// ReconcileResult is the result of a reconciliation: TookEffect is true
// (the call's effect happened), false (it did not) or nil (it cannot tell).
type ReconcileResult struct {
	V          int    `json:"v"`
	TookEffect *bool  `json:"took_effect"`
	Content    []Item `json:"content,omitempty"`
}

// Decl is what a tool worker announces of one tool (Y2).
type Decl struct {
	Name                   string          `json:"name"`
	Description            string          `json:"description,omitempty"`
	Parameters             json.RawMessage `json:"parameters"`
	Effect                 Effect          `json:"effect"`
	Concurrent             bool            `json:"concurrent,omitempty"`
	CacheSeconds           int             `json:"cache_seconds,omitempty"`
	Subject                string          `json:"subject,omitempty"`
	TimeoutSeconds         int             `json:"timeout_seconds,omitempty"`
	ScheduleToStartSeconds int             `json:"schedule_to_start_seconds,omitempty"`
	HeartbeatSeconds       int             `json:"heartbeat_seconds,omitempty"`
	Reconcile              bool            `json:"reconcile,omitempty"`
	SchemaHash             string          `json:"schema_hash"`
}

// Announcement is the argument of the AnnounceUpdate.
type Announcement struct {
	V      int    `json:"v"`
	Queue  string `json:"queue"`
	Worker string `json:"worker,omitempty"`
	Tools  []Decl `json:"tools"`
}

// Refusal is one tool an announcement did not add, and why.
type Refusal struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// AnnounceResult is the AnnounceUpdate's answer.
type AnnounceResult struct {
	Accepted []string  `json:"accepted"`
	Refused  []Refusal `json:"refused,omitempty"`
}

// Catalog is what a queue's catalog holds: the tools last announced, by
// whom and when (Unix seconds).
type Catalog struct {
	Queue       string `json:"queue"`
	Worker      string `json:"worker,omitempty"`
	AnnouncedAt int64  `json:"announced_at,omitempty"`
	Tools       []Decl `json:"tools"`
	// Announcements counts the announcements since the catalog started.
	Announcements int `json:"announcements"`
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// CheckName refuses a name a user tool may not have.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("tool name %q: a name is a lower-case letter, then up to 63 lower-case letters, digits or '_'", name)
	}
	return nil
}

// SchemaHash is "sha256:" and the hex digest of the schema's canonical
// JSON: keys sorted, no spaces, UTF-8 unescaped.
func SchemaHash(schema json.RawMessage) (string, error) {
	canon, err := Canonical(schema)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Canonical is v's JSON with every object's keys sorted and no spaces;
// numbers keep their text.
func Canonical(v json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Keywords toolround's validator enforces, or that only annotate. A schema
// with any other keyword is refused when it is announced (Y1).
var enforced = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"patternProperties": true, "minProperties": true, "maxProperties": true, "propertyNames": true,
	"dependencies": true, "items": true, "contains": true, "enum": true, "const": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"multipleOf": true, "minLength": true, "maxLength": true, "pattern": true,
	"minItems": true, "maxItems": true, "uniqueItems": true,
	"anyOf": true, "oneOf": true, "allOf": true, "not": true, "if": true, "then": true, "else": true,
	"$ref": true, "$defs": true, "definitions": true, "$schema": true, "$id": true, "$comment": true,
	"default": true, "description": true, "title": true, "examples": true, "format": true,
	"readOnly": true, "writeOnly": true, "deprecated": true,
}

// subschemas name the keywords whose value holds schemas: a map of them,
// a list of them, or one.
var (
	schemaMaps  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependencies": true}
	schemaLists = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true}
	schemaOne   = map[string]bool{"additionalProperties": true, "propertyNames": true, "items": true, "contains": true, "not": true, "if": true, "then": true, "else": true}
)

// CheckSchema refuses a tool's parameters that are not an object schema,
// or that use a keyword toolround's validator does not enforce (naming it
// and where), or a $ref outside the schema.
func CheckSchema(schema json.RawMessage) error {
	var top any
	if err := json.Unmarshal(schema, &top); err != nil {
		return fmt.Errorf("parameters are not JSON: %v", err)
	}
	m, ok := top.(map[string]any)
	if !ok {
		return fmt.Errorf("parameters must be a JSON schema object")
	}
	if t, has := m["type"]; has && t != "object" {
		return fmt.Errorf(`parameters must be of "type": "object", not %v`, t)
	}
	return walkSchema(m, "#")
}

func walkSchema(v any, at string) error {
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return nil
		}
		return fmt.Errorf("%s: a schema must be an object or a boolean", at)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !enforced[k] {
			return fmt.Errorf("%s: schema keyword %q is not enforced by toolround's validator", at, k)
		}
		val := m[k]
		switch {
		case k == "$ref":
			ref, _ := val.(string)
			if !strings.HasPrefix(ref, "#") {
				return fmt.Errorf("%s: $ref %q points outside the schema", at, ref)
			}
		case schemaMaps[k]:
			sub, ok := val.(map[string]any)
			if !ok {
				if k == "dependencies" {
					continue // a list of names
				}
				return fmt.Errorf("%s/%s: must be an object", at, k)
			}
			names := make([]string, 0, len(sub))
			for n := range sub {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if _, isList := sub[n].([]any); isList && k == "dependencies" {
					continue
				}
				if err := walkSchema(sub[n], at+"/"+k+"/"+n); err != nil {
					return err
				}
			}
		case schemaLists[k]:
			list, ok := val.([]any)
			if !ok {
				return fmt.Errorf("%s/%s: must be a list", at, k)
			}
			for i, s := range list {
				if err := walkSchema(s, fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
					return err
				}
			}
		case schemaOne[k]:
			if _, isList := val.([]any); isList && k == "items" {
				return fmt.Errorf("%s/items: a list of item schemas is not enforced; use one schema", at)
			}
			if err := walkSchema(val, at+"/"+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// Check refuses a declaration a round could not run: a bad name, effect,
// schema or hash, or negative times.
func (d Decl) Check() error {
	if err := CheckName(d.Name); err != nil {
		return err
	}
	if d.Effect != EffectReadOnly && d.Effect != EffectSideEffect {
		return fmt.Errorf("tool %s: effect %q is neither %q nor %q", d.Name, d.Effect, EffectReadOnly, EffectSideEffect)
	}
	if err := CheckSchema(d.Parameters); err != nil {
		return fmt.Errorf("tool %s: %w", d.Name, err)
	}
	want, err := SchemaHash(d.Parameters)
	if err != nil {
		return fmt.Errorf("tool %s: %w", d.Name, err)
	}
	if !strings.HasPrefix(d.SchemaHash, "sha256:") || len(d.SchemaHash) != len(want) {
		return fmt.Errorf("tool %s: schema_hash %q is not sha256:<64 hex digits>", d.Name, d.SchemaHash)
	}
	if d.CacheSeconds < 0 || d.TimeoutSeconds < 0 || d.ScheduleToStartSeconds < 0 || d.HeartbeatSeconds < 0 {
		return fmt.Errorf("tool %s: cache_seconds, timeout_seconds, schedule_to_start_seconds and heartbeat_seconds must not be negative", d.Name)
	}
	if d.CacheSeconds > 0 && d.Effect != EffectReadOnly {
		return fmt.Errorf("tool %s: only a read_only tool may be cached", d.Name)
	}
	if d.Reconcile && d.Effect != EffectSideEffect {
		return fmt.Errorf("tool %s: only a side_effect tool reconciles", d.Name)
	}
	return nil
}

// Check refuses an announcement that is not of this wire version or
// names no queue.
func (a Announcement) Check() error {
	if a.V != WireVersion {
		return fmt.Errorf("announce: wire version %d, this worker speaks %d", a.V, WireVersion)
	}
	if a.Queue == "" {
		return fmt.Errorf("announce: no queue")
	}
	return nil
}
