package round

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Wire formats (F1, F2). A round's turn comes in one of three shapes and
// its messages go back in the same one; everything between (the passes,
// statuses, dedupe keys, approvals, workflow ids) sees only the call list
// that TurnCalls reads from the turn, whatever its format.

// Format is the wire format of a round's turn and of its messages.
type Format string

const (
	// FormatOpenAI: assistant is a chat-completions message with
	// tool_calls; the messages are tool messages. The default.
	FormatOpenAI Format = "openai"
	// FormatAnthropic: assistant is a Messages API assistant message whose
	// tool_use blocks are the calls; the messages are one user message of
	// tool_result blocks.
	FormatAnthropic Format = "anthropic"
	// FormatResponses: output holds a Responses API response's items whose
	// function_call items are the calls; the messages are
	// function_call_output items.
	FormatResponses Format = "responses"
)

// Formats are the formats a round takes, the default first.
var Formats = []Format{FormatOpenAI, FormatAnthropic, FormatResponses}

// Name is f, or FormatOpenAI for the empty format of inputs written before
// formats existed.
func (f Format) Name() Format {
	if f == "" {
		return FormatOpenAI
	}
	return f
}

// ParseFormat reads a format's name ("" is FormatOpenAI).
func ParseFormat(s string) (Format, error) {
	f := Format(s).Name()
	if slices.Contains(Formats, f) {
		return f, nil
	}
	names := make([]string, len(Formats))
	for i, k := range Formats {
		names[i] = string(k)
	}
	msg := fmt.Sprintf("format %q is not one of %s", s, strings.Join(names, ", "))
	if c := closest(s, names); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	return "", shapeErrorf("%s", msg)
}

// shapeErrorf is an input whose turn has a shape no format reads: an
// input error of the same code as an unknown field (U8).
func shapeErrorf(format string, a ...any) error {
	return Errorf(CodeInvalidInput, format, a...)
}

// inputJSON is Input without its methods, encoded as Go encodes structs.
type inputJSON Input

// UnmarshalJSON reads an input in any format: in format anthropic the
// field assistant is the Messages API message, kept in Turn as given.
// Problems of the turn's shape are left to TurnCalls (and Validate), so
// that a workflow decodes any input leniently.
func (in *Input) UnmarshalJSON(b []byte) error {
	var head struct {
		Format Format `json:"format"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return json.Unmarshal(b, (*inputJSON)(in)) // its error names the field
	}
	if head.Format != FormatAnthropic {
		return json.Unmarshal(b, (*inputJSON)(in))
	}
	aux := struct {
		*inputJSON
		Assistant json.RawMessage `json:"assistant"`
	}{inputJSON: (*inputJSON)(in)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	in.Turn = nil
	if len(aux.Assistant) > 0 && string(aux.Assistant) != "null" {
		in.Turn = slices.Clone(aux.Assistant)
	}
	return nil
}

// MarshalJSON writes the input as its format has it: an openai input as
// inputs were written before formats existed, an anthropic one with Turn as
// its assistant.
func (in Input) MarshalJSON() ([]byte, error) {
	if in.Format != FormatAnthropic {
		return json.Marshal(inputJSON(in))
	}
	return json.Marshal(struct {
		inputJSON
		Assistant json.RawMessage `json:"assistant,omitempty"`
	}{inputJSON(in), in.Turn})
}

// TurnCall is one call of a round's turn, in call order, in any format.
type TurnCall struct {
	ToolCall
	// Where names the call in the input, for errors:
	// "assistant.tool_calls[0]", "assistant.content[2]", "output[1]".
	Where string
	// CutOff, when set, says that the turn was cut off before it ended
	// (Anthropic stop_reason max_tokens, a Responses item with status
	// incomplete): the call may be incomplete and never runs (F1).
	CutOff string
}

// TurnCalls are the calls of the round's turn, in call order, read from the
// format's own objects; an error names what no format reads (F1).
func (in *Input) TurnCalls() ([]TurnCall, error) {
	f, err := ParseFormat(string(in.Format))
	if err != nil {
		return nil, err
	}
	switch f {
	case FormatAnthropic:
		if len(in.Output) > 0 {
			return nil, shapeErrorf("output is for format responses; format anthropic reads its calls from assistant.content")
		}
		if !in.Assistant.empty() {
			return nil, shapeErrorf("in format anthropic the assistant message is Turn (the JSON field assistant), not Assistant")
		}
		return anthropicCalls(in.Turn)
	case FormatResponses:
		if len(in.Turn) > 0 || !in.Assistant.empty() {
			return nil, shapeErrorf("format responses takes no assistant: its calls are the function_call items of output")
		}
		return responsesCalls(in.Output)
	}
	if len(in.Output) > 0 {
		return nil, shapeErrorf(`output holds the items of a Responses API response: set "format": "responses"`)
	}
	if len(in.Turn) > 0 {
		return nil, shapeErrorf(`Turn holds a Messages API message: set "format": "anthropic"`)
	}
	out := make([]TurnCall, len(in.Assistant.ToolCalls))
	for i, c := range in.Assistant.ToolCalls {
		out[i] = TurnCall{ToolCall: c, Where: fmt.Sprintf("assistant.tool_calls[%d]", i)}
	}
	return out, nil
}

// ToolCalls are the calls of TurnCalls, nil when the turn cannot be read.
func (in *Input) ToolCalls() []ToolCall {
	calls, err := in.TurnCalls()
	if err != nil {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = c.ToolCall
	}
	return out
}

func (m *Message) empty() bool {
	return m.Role == "" && m.Content == "" && len(m.ToolCalls) == 0 && m.ToolCallID == "" && len(m.Raw) == 0
}

// Anthropic content blocks of an assistant message that pass through: the
// model's text and thinking and what the server ran itself.
var anthropicPassThrough = []string{"text", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result",
	"web_fetch_tool_result", "mcp_tool_use", "mcp_tool_result", "code_execution_tool_result",
	"bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "container_upload"}

// anthropicCallFields are the fields of a tool_use block.
var anthropicCallFields = []string{"type", "id", "name", "input", "cache_control", "caller"}

// Stop reasons of an Anthropic turn that was cut off.
var anthropicCutOff = []string{"max_tokens", "model_context_window_exceeded"}

type anthropicMessage struct {
	Role       *string         `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	StopReason string          `json:"stop_reason"`
	blocks     []json.RawMessage
}

func readAnthropic(raw json.RawMessage) (*anthropicMessage, error) {
	if len(raw) == 0 {
		return nil, shapeErrorf("format anthropic needs assistant: a Messages API assistant message")
	}
	var m anthropicMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, shapeErrorf("assistant must be a Messages API assistant message object: %v", err)
	}
	if m.Role != nil && *m.Role != "assistant" {
		return nil, shapeErrorf(`assistant.role is %q; the turn is the model's: "assistant"`, *m.Role)
	}
	if len(m.ToolCalls) > 0 {
		return nil, shapeErrorf("assistant.tool_calls is the openai shape: in format anthropic the calls are the tool_use blocks of assistant.content")
	}
	if err := json.Unmarshal(m.Content, &m.blocks); err != nil || m.blocks == nil {
		return nil, shapeErrorf("assistant.content must be an array of content blocks in format anthropic")
	}
	return &m, nil
}

type anthropicBlock struct {
	Type  *string         `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Text  string          `json:"text"`
}

func anthropicCalls(raw json.RawMessage) ([]TurnCall, error) {
	m, err := readAnthropic(raw)
	if err != nil {
		return nil, err
	}
	cut := ""
	if slices.Contains(anthropicCutOff, m.StopReason) {
		cut = fmt.Sprintf("the model's turn was cut off (stop_reason %s) before it ended, so this call may be incomplete; it did not run. Ask again with more room for the answer", m.StopReason)
	}
	out := []TurnCall{}
	for i, rb := range m.blocks {
		where := fmt.Sprintf("assistant.content[%d]", i)
		var b anthropicBlock
		if err := json.Unmarshal(rb, &b); err != nil {
			return nil, shapeErrorf("%s is not a content block object", where)
		}
		if b.Type == nil {
			return nil, shapeErrorf("%s has no type", where)
		}
		switch t := *b.Type; {
		case t == "tool_use":
			if strings.TrimSpace(b.ID) == "" {
				return nil, shapeErrorf("%s (tool_use) has no id", where)
			}
			if strings.TrimSpace(b.Name) == "" {
				return nil, shapeErrorf("%s (tool_use %s) has no name", where, b.ID)
			}
			args := bytes.TrimSpace(b.Input)
			if len(args) == 0 || args[0] != '{' {
				return nil, shapeErrorf("%s (tool_use %s): input must be a JSON object", where, b.ID)
			}
			out = append(out, TurnCall{ToolCall: ToolCall{ID: b.ID, Type: "function", Function: FunctionCall{Name: b.Name, Arguments: Arguments(args)}},
				Where: where, CutOff: cut})
		case slices.Contains(anthropicPassThrough, t):
		case t == "tool_result":
			return nil, shapeErrorf("%s is a tool_result block: it belongs in a user message, not in the model's turn", where)
		default:
			msg := fmt.Sprintf("%s has the block type %q, which format anthropic does not know", where, t)
			if c := closest(t, append([]string{"tool_use"}, anthropicPassThrough...)); c != "" {
				msg += fmt.Sprintf("; did you mean %q?", c)
			} else {
				msg += "; tool_use blocks are calls and " + strings.Join(anthropicPassThrough, ", ") + " pass through"
			}
			return nil, shapeErrorf("%s", msg)
		}
	}
	return out, nil
}

// Responses output items that the server ran itself or that carry the
// model's text and reasoning: they pass through.
var responsesPassThrough = []string{"reasoning", "message", "web_search_call", "file_search_call", "mcp_call",
	"mcp_list_tools", "code_interpreter_call", "image_generation_call", "compaction"}

// Responses output items that wait for a client's output or approval,
// which a round does not give.
var responsesClientItems = []string{"custom_tool_call", "computer_call", "local_shell_call", "mcp_approval_request",
	"shell_call", "apply_patch_call"}

// responsesCallFields are the fields of a function_call item.
var responsesCallFields = []string{"type", "id", "call_id", "name", "arguments", "status"}

type responsesItem struct {
	Type      *string   `json:"type"`
	CallID    string    `json:"call_id"`
	Name      string    `json:"name"`
	Arguments Arguments `json:"arguments"`
	Status    string    `json:"status"`
	Role      string    `json:"role"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func readResponses(raw json.RawMessage) ([]json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, shapeErrorf("format responses needs output: the output items of a Responses API response")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, shapeErrorf("output must be the array of a Responses API response's output items")
	}
	return items, nil
}

func responsesCalls(raw json.RawMessage) ([]TurnCall, error) {
	items, err := readResponses(raw)
	if err != nil {
		return nil, err
	}
	out := []TurnCall{}
	for i, ri := range items {
		where := fmt.Sprintf("output[%d]", i)
		var it responsesItem
		if err := json.Unmarshal(ri, &it); err != nil {
			var probe struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(ri, &probe) != nil || probe.Type == "function_call" {
				return nil, shapeErrorf("%s is not a Responses output item: %v", where, err)
			}
			it = responsesItem{Type: &probe.Type} // a pass-through item's own fields are its business
		}
		if it.Type == nil {
			return nil, shapeErrorf("%s has no type", where)
		}
		switch t := *it.Type; {
		case t == "function_call":
			if strings.TrimSpace(it.CallID) == "" {
				return nil, shapeErrorf("%s (function_call) has no call_id", where)
			}
			if strings.TrimSpace(it.Name) == "" {
				return nil, shapeErrorf("%s (function_call %s) has no name", where, it.CallID)
			}
			c := TurnCall{ToolCall: ToolCall{ID: it.CallID, Type: "function", Function: FunctionCall{Name: it.Name, Arguments: it.Arguments}}, Where: where}
			if it.Status == "incomplete" {
				c.CutOff = "the model's turn was cut off (the item's status is incomplete) before this call was complete; it did not run. Ask again with more room for the answer"
			}
			out = append(out, c)
		case slices.Contains(responsesPassThrough, t):
		case slices.Contains(responsesClientItems, t):
			return nil, shapeErrorf("%s is a %s item, which waits for an output or approval that a round does not give; offer that tool as a function tool", where, t)
		case t == "function_call_output":
			return nil, shapeErrorf("%s is a function_call_output: an input item, not part of a response's output", where)
		default:
			msg := fmt.Sprintf("%s has the item type %q, which format responses does not know", where, t)
			if c := closest(t, append([]string{"function_call"}, responsesPassThrough...)); c != "" {
				msg += fmt.Sprintf("; did you mean %q?", c)
			} else {
				msg += "; function_call items are calls and " + strings.Join(responsesPassThrough, ", ") + " pass through"
			}
			return nil, shapeErrorf("%s", msg)
		}
	}
	return out, nil
}

// checkTurnFields refuses, at the edge, a field of a call object (a
// tool_use block, a function_call item) that is not part of its format
// (U8); the rest of the turn passes as it is.
func checkTurnFields(in *Input, what string) error {
	check := func(raw json.RawMessage, typ string, fields []string, where string) error {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		var t string
		if json.Unmarshal(obj["type"], &t) != nil || t != typ {
			return nil
		}
		for _, k := range sortedRawKeys(obj) {
			if !slices.Contains(fields, k) {
				return &UnknownFieldError{Field: k, In: where, What: what, Suggest: closest(k, fields)}
			}
		}
		if k := duplicateKey(raw); k != "" {
			return &DuplicateFieldError{Field: k, In: where, What: what}
		}
		return nil
	}
	switch in.Format.Name() {
	case FormatAnthropic:
		m, err := readAnthropic(in.Turn)
		if err != nil {
			return nil // TurnCalls says what is wrong
		}
		for i, b := range m.blocks {
			if err := check(b, "tool_use", anthropicCallFields, fmt.Sprintf("assistant.content[%d]", i)); err != nil {
				return err
			}
		}
	case FormatResponses:
		items, err := readResponses(in.Output)
		if err != nil {
			return nil
		}
		for i, it := range items {
			if err := check(it, "function_call", responsesCallFields, fmt.Sprintf("output[%d]", i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedRawKeys(obj map[string]json.RawMessage) []string {
	out := make([]string, 0, len(obj))
	for k := range obj {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// MapArguments replaces the arguments of every call of the turn with what
// fn returns for it, in the format's own objects (a tool_use block's input,
// a function_call's arguments, a tool call's arguments), so that what the
// round runs and what its history holds are the same (client sealing,
// F2). Objects whose arguments do not change stay as they are. The input's
// slices are replaced, never written to: a copy of an Input may be mapped
// without changing the original.
func (in *Input) MapArguments(fn func(TurnCall) (Arguments, error)) error {
	calls, err := in.TurnCalls()
	if err != nil {
		return err
	}
	next := make([]Arguments, len(calls))
	changed := false
	for i, c := range calls {
		if next[i], err = fn(c); err != nil {
			return err
		}
		changed = changed || next[i] != c.Function.Arguments
	}
	if !changed {
		return nil
	}
	switch in.Format.Name() {
	case FormatAnthropic:
		return in.mapAnthropic(calls, next)
	case FormatResponses:
		return in.mapResponses(calls, next)
	}
	tc := slices.Clone(in.Assistant.ToolCalls)
	for i := range tc {
		tc[i].Function.Arguments = next[i]
	}
	in.Assistant.ToolCalls = tc
	return nil
}

// rewrite replaces field of the objects at the given indexes of list.
func rewrite(list []json.RawMessage, at map[int]json.RawMessage, field string) ([]json.RawMessage, error) {
	out := slices.Clone(list)
	for i, v := range at {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(out[i], &obj); err != nil {
			return nil, err
		}
		obj[field] = v
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// indexOf reads the index of a TurnCall's Where ("assistant.content[2]"),
// which TurnCalls wrote, so it always holds one.
func indexOf(where, prefix string) int {
	var i int
	_, _ = fmt.Sscanf(strings.TrimPrefix(where, prefix), "[%d]", &i)
	return i
}

func (in *Input) mapAnthropic(calls []TurnCall, next []Arguments) error {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(in.Turn, &msg); err != nil {
		return err
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(msg["content"], &blocks); err != nil {
		return err
	}
	at := map[int]json.RawMessage{}
	for i, c := range calls {
		if next[i] == c.Function.Arguments {
			continue
		}
		v := json.RawMessage(next[i])
		if !json.Valid(v) || bytes.TrimSpace(v)[0] != '{' {
			return fmt.Errorf("call %s: its new arguments are not a JSON object", c.ID)
		}
		at[indexOf(c.Where, "assistant.content")] = v
	}
	blocks, err := rewrite(blocks, at, "input")
	if err != nil {
		return err
	}
	if msg["content"], err = json.Marshal(blocks); err != nil {
		return err
	}
	turn, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	in.Turn = turn
	return nil
}

func (in *Input) mapResponses(calls []TurnCall, next []Arguments) error {
	items, err := readResponses(in.Output)
	if err != nil {
		return err
	}
	at := map[int]json.RawMessage{}
	for i, c := range calls {
		if next[i] == c.Function.Arguments {
			continue
		}
		s, err := json.Marshal(string(next[i]))
		if err != nil {
			return err
		}
		at[indexOf(c.Where, "output")] = s
	}
	if items, err = rewrite(items, at, "arguments"); err != nil {
		return err
	}
	out, err := json.Marshal(items)
	if err != nil {
		return err
	}
	in.Output = out
	return nil
}

// ShortTurn is what stays in history of a turn kept in the blob store: in
// format anthropic the message's role, stop_reason and tool_use blocks, in
// format responses its function_call items, so that a round reads the
// same calls (and a cut-off turn is still cut off); text, thinking and
// reasoning are left out.
func ShortTurn(f Format, raw json.RawMessage) (json.RawMessage, error) {
	keep := func(list []json.RawMessage, typ string) []json.RawMessage {
		out := []json.RawMessage{}
		for _, b := range list {
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &head) == nil && head.Type == typ {
				out = append(out, b)
			}
		}
		return out
	}
	switch f.Name() {
	case FormatAnthropic:
		m, err := readAnthropic(raw)
		if err != nil {
			return nil, err
		}
		short := map[string]any{"role": "assistant", "content": keep(m.blocks, "tool_use")}
		if m.StopReason != "" {
			short["stop_reason"] = m.StopReason
		}
		return json.Marshal(short)
	case FormatResponses:
		items, err := readResponses(raw)
		if err != nil {
			return nil, err
		}
		return json.Marshal(keep(items, "function_call"))
	}
	return nil, fmt.Errorf("format %s keeps no raw turn", f.Name())
}

// TurnJSON is the turn as the caller gave it in a format other than
// openai: Turn in format anthropic, Output in format responses.
func (in *Input) TurnJSON() json.RawMessage {
	switch in.Format.Name() {
	case FormatAnthropic:
		return in.Turn
	case FormatResponses:
		return in.Output
	}
	return nil
}

// ChatAssistant is the turn as a chat-completions assistant message: its
// text and its calls. Pass 3 records it in the session's history, which is
// the same in every format.
func (in *Input) ChatAssistant() Message {
	if in.Format.Name() == FormatOpenAI {
		return in.Assistant
	}
	m := Message{Role: "assistant", ToolCalls: in.ToolCalls()}
	var text []string
	switch in.Format.Name() {
	case FormatAnthropic:
		if am, err := readAnthropic(in.Turn); err == nil {
			for _, rb := range am.blocks {
				var b anthropicBlock
				if json.Unmarshal(rb, &b) == nil && b.Type != nil && *b.Type == "text" {
					text = append(text, b.Text)
				}
			}
		}
	case FormatResponses:
		if items, err := readResponses(in.Output); err == nil {
			for _, ri := range items {
				var it responsesItem
				if json.Unmarshal(ri, &it) == nil && it.Type != nil && *it.Type == "message" {
					for _, p := range it.Content {
						if p.Type == "output_text" {
							text = append(text, p.Text)
						}
					}
				}
			}
		}
	}
	m.Content = strings.Join(text, "\n")
	return m
}

// IsError reports whether a result is an error for the model: Anthropic's
// tool_result is_error (F2).
func IsError(s Status) bool {
	switch s {
	case StatusError, StatusInvalid, StatusUnknown, StatusRefused, StatusUnknownOutcome,
		StatusCancelled, StatusExpired, StatusSkipped:
		return true
	}
	return false
}

type anthropicToolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   any    `json:"content"` // a string, or text and image blocks (images.go)
	IsError   bool   `json:"is_error"`
}

type responsesOutputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"` // a string, or input_text and input_image parts (images.go)
}

// Messages are what the caller appends to its conversation after the turn,
// in format f (F2), built from the results in call order: tool messages;
// one user message of tool_result blocks; function_call_output items. A
// repeated result's message says first what it repeats (U3), and a large
// result's preview names its content_ref, in every format. A result's
// images go in the format's own objects (images.go): in format openai one
// user message of them follows the tool messages.
func (f Format) Messages(results []CallResult) []Message {
	switch f.Name() {
	case FormatAnthropic:
		blocks := make([]anthropicToolResult, len(results))
		for i := range results {
			r := &results[i]
			blocks[i] = anthropicToolResult{Type: "tool_result", ToolUseID: r.CallID, Content: r.anthropicContent(), IsError: IsError(r.Status)}
		}
		b, _ := json.Marshal(struct {
			Role    string                `json:"role"`
			Content []anthropicToolResult `json:"content"`
		}{"user", blocks})
		return []Message{{Role: "user", Raw: b}}
	case FormatResponses:
		out := make([]Message, len(results))
		for i := range results {
			r := &results[i]
			b, _ := json.Marshal(responsesOutputItem{Type: "function_call_output", CallID: r.CallID, Output: r.responsesOutput()})
			out[i] = Message{Raw: b}
		}
		return out
	}
	out := Messages(results)
	for i := range results {
		if len(results[i].Images) > 0 {
			out[i].Content = results[i].imageText()
		}
	}
	return out
}

// History is the turn followed by the messages, in format f: for openai
// the assistant message, for anthropic the turn's message as the Messages
// API takes it back (role and content), for responses the turn's output
// items as given.
func (f Format) History(assistant Message, turn json.RawMessage, messages []Message) []Message {
	switch f.Name() {
	case FormatAnthropic:
		content := json.RawMessage(`[]`)
		if m, err := readAnthropic(turn); err == nil {
			content = m.Content
		}
		b, _ := json.Marshal(struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}{"assistant", content})
		return append([]Message{{Role: "assistant", Raw: b}}, messages...)
	case FormatResponses:
		items, _ := readResponses(turn)
		out := make([]Message, 0, len(items)+len(messages))
		for _, it := range items {
			out = append(out, Message{Raw: slices.Clone(it)})
		}
		return append(out, messages...)
	}
	return History(assistant, messages)
}

// partsContent reports a chat-completions message whose content is an
// array of parts (the user message of a round's images), which Message
// keeps in Raw.
func partsContent(raw json.RawMessage) bool {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	c := bytes.TrimSpace(m.Content)
	return len(c) > 0 && c[0] == '['
}

// resultJSON is Result without its methods.
type resultJSON Result

// UnmarshalJSON reads a result in any format: the messages and the history
// of a format other than openai are kept in their Raw.
func (r *Result) UnmarshalJSON(b []byte) error {
	aux := struct {
		*resultJSON
		Messages []json.RawMessage `json:"messages"`
		History  []json.RawMessage `json:"history"`
	}{resultJSON: (*resultJSON)(r)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	read := func(list []json.RawMessage) ([]Message, error) {
		if list == nil {
			return nil, nil
		}
		out := make([]Message, len(list))
		for i, raw := range list {
			if r.Format.Name() == FormatOpenAI && !partsContent(raw) {
				if err := json.Unmarshal(raw, &out[i]); err != nil {
					return nil, err
				}
				continue
			}
			var role struct {
				Role string `json:"role"`
			}
			_ = json.Unmarshal(raw, &role)
			out[i] = Message{Role: role.Role, Raw: slices.Clone(raw)}
		}
		return out, nil
	}
	var err error
	if r.Messages, err = read(aux.Messages); err != nil {
		return err
	}
	r.History, err = read(aux.History)
	return err
}
