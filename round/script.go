package round

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A scripted model (docs/scripted-model.md): an agent run whose model
// turns are written in advance, so that a run can be tried and tested
// offline, with no model server (`starter agent --model scripted:FILE`).

const (
	// maxScriptBytes bounds a script: it travels with each model call.
	maxScriptBytes = 64 << 10
	// ScriptModelPrefix starts the --model value of a scripted model.
	ScriptModelPrefix = "scripted:"
)

// ModelScript is a scripted model: its turns, in one format, played in
// order. The model call that follows k assistant turns of the
// conversation gets turn k+1; a turn without calls is the final answer.
type ModelScript struct {
	// Format of every turn: openai (a chat-completions assistant message),
	// anthropic (a Messages API assistant message) or responses (an object
	// whose output holds a Responses API response's output items).
	Format Format `json:"format,omitempty"`
	// Turns are the model's turns, the first first.
	Turns []json.RawMessage `json:"turns"`
}

// ParseModelScript reads a script as the command line reads a file: it
// refuses fields that are not part of it (U8) and every turn that is not
// a turn of its format, naming the turn.
func ParseModelScript(b []byte) (*ModelScript, error) {
	if len(b) > maxScriptBytes {
		return nil, fmt.Errorf("the script is %d bytes; at most %d are accepted", len(b), maxScriptBytes)
	}
	var s ModelScript
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("the script is not valid JSON at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("the script: field %q must be %s, not %s", te.Field, te.Type, te.Value)
		default:
			return nil, fmt.Errorf("the script is not valid JSON: %v", err)
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("the script has data after its JSON object")
	}
	if err := CheckFields(b, &s, "the script"); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate reports a script that cannot be played: an unknown format, no
// turns, or a turn that its format does not read.
func (s *ModelScript) Validate() error {
	if s == nil {
		return nil
	}
	if _, err := ParseFormat(string(s.Format)); err != nil {
		return fmt.Errorf("the script: %w", err)
	}
	if len(s.Turns) == 0 {
		return errors.New(`the script has no turns: want {"format": "openai", "turns": [{"role": "assistant", "content": "the answer"}]}`)
	}
	if b, err := json.Marshal(s); err == nil && len(b) > maxScriptBytes {
		return fmt.Errorf("the script is %d bytes; at most %d are accepted", len(b), maxScriptBytes)
	}
	for i := range s.Turns {
		if _, err := s.turn(i); err != nil {
			return err
		}
	}
	return nil
}

// Turn is turn n (from 1) as a chat-completions assistant message: its
// text and its calls, whatever the script's format.
func (s *ModelScript) Turn(n int) (Message, error) {
	if n < 1 || n > len(s.Turns) {
		return Message{}, fmt.Errorf("the script has %d turns and the model is asked for turn %d: end the script with a turn without calls, the final answer", len(s.Turns), n)
	}
	in, err := s.turn(n - 1)
	if err != nil {
		return Message{}, err
	}
	return in.ChatAssistant(), nil
}

// turn reads turn i as the assistant turn of a round in the script's
// format, with the checks of a round input (U8, F1).
func (s *ModelScript) turn(i int) (*Input, error) {
	f := s.Format.Name()
	doc := map[string]any{"session_id": "script", "run_id": "script", "round": 1, "provider": "openai", "format": f}
	raw := s.Turns[i]
	if f == FormatResponses {
		var t struct {
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &t) != nil || len(t.Output) == 0 {
			return nil, fmt.Errorf(`turn %d of the script: in format responses a turn is {"output": [...]}, the output items of a Responses API response`, i+1)
		}
		doc["output"] = t.Output
	} else {
		doc["assistant"] = raw
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("turn %d of the script: %w", i+1, err)
	}
	in, err := ParseInput(b)
	if err != nil {
		return nil, fmt.Errorf("turn %d of the script (a model turn in format %s, read as a round's turn): %w", i+1, f, err)
	}
	return in, nil
}
