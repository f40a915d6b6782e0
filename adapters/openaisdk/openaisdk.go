// Package openaisdk converts between the official OpenAI Go SDK
// (github.com/openai/openai-go) and toolround's rounds (U9): a chat
// completion's assistant message becomes a round in format openai, a
// Responses API response a round in format responses (F1), and a round's
// result becomes the tool messages or the function_call_output input items
// to send next (F2). It is a module of its own, so the SDK is a dependency
// of the programs that use it and of no other.
//
//	resp, _ := oc.Responses.New(ctx, params)       // the model's turn
//	turn, _ := openaisdk.ResponseTurn(resp)
//	res, _ := run.Round(ctx, turn)                 // a client.RunHandle
//	next, _ := openaisdk.ResponseItems(resp, res)   // stateless: the turn's items, then the outputs
package openaisdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolround/toolround/round"
)

// ChatTurn is the round input's turn for a chat completion's assistant
// message (format openai): its tool_calls are the calls.
func ChatTurn(msg *openai.ChatCompletionMessage) (round.Input, error) {
	if msg == nil {
		return round.Input{}, errors.New("openaisdk: no message")
	}
	raw, err := rawOf(msg.RawJSON(), msg)
	if err != nil {
		return round.Input{}, err
	}
	var m round.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return round.Input{}, fmt.Errorf("openaisdk: the assistant message: %w", err)
	}
	m.Role = "assistant"
	return round.Input{Format: round.FormatOpenAI, Assistant: m}, nil
}

// ToolMessages are the tool messages that follow the assistant message, one
// per call in call order, as the round gave them back. A chat-completions
// tool message holds text only: an image is its text line there (F2), and
// its bytes are in res.Results[i].Images for a caller that sends them on.
func ToolMessages(res *round.Result) ([]openai.ChatCompletionMessageParamUnion, error) {
	if err := formatOf(res, round.FormatOpenAI); err != nil {
		return nil, err
	}
	msgs := res.Messages
	if len(msgs) == 0 {
		msgs = round.FormatOpenAI.Messages(res.Results)
	}
	out := make([]openai.ChatCompletionMessageParamUnion, len(msgs))
	for i, m := range msgs {
		out[i] = openai.ToolMessage(m.Content, m.ToolCallID)
	}
	return out, nil
}

// ResponseTurn is the round input's turn for a Responses API response
// (format responses): its function_call items are the calls; reasoning and
// other items pass through, and an incomplete response's calls never run.
func ResponseTurn(resp *responses.Response) (round.Input, error) {
	items, err := outputOf(resp)
	if err != nil {
		return round.Input{}, err
	}
	in := round.Input{Format: round.FormatResponses, Output: items}
	if _, err := in.TurnCalls(); err != nil {
		return round.Input{}, fmt.Errorf("openaisdk: %w", err)
	}
	return in, nil
}

// FunctionCallOutputs are the function_call_output input items of the
// round's calls, in call order.
func FunctionCallOutputs(res *round.Result) (responses.ResponseInputParam, error) {
	if err := formatOf(res, round.FormatResponses); err != nil {
		return nil, err
	}
	msgs := res.Messages
	if len(msgs) == 0 {
		msgs = round.FormatResponses.Messages(res.Results)
	}
	return inputItems(msgs)
}

// ResponseItems is what a stateless caller (store: false) sends next: the
// response's output items as input items, reasoning included, then the
// round's function_call_output items.
func ResponseItems(resp *responses.Response, res *round.Result) (responses.ResponseInputParam, error) {
	items, err := outputOf(resp)
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(items, &list); err != nil {
		return nil, fmt.Errorf("openaisdk: the response's output: %w", err)
	}
	turn := make([]round.Message, len(list))
	for i, it := range list {
		turn[i] = round.Message{Raw: it}
	}
	in, err := inputItems(turn)
	if err != nil {
		return nil, err
	}
	outs, err := FunctionCallOutputs(res)
	if err != nil {
		return nil, err
	}
	return append(in, outs...), nil
}

func inputItems(msgs []round.Message) (responses.ResponseInputParam, error) {
	out := make(responses.ResponseInputParam, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("openaisdk: item %d: %w", i, err)
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, fmt.Errorf("openaisdk: item %d as an input item: %w", i, err)
		}
	}
	return out, nil
}

func outputOf(resp *responses.Response) (json.RawMessage, error) {
	if resp == nil {
		return nil, errors.New("openaisdk: no response")
	}
	if raw := resp.RawJSON(); raw != "" {
		var whole struct {
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal([]byte(raw), &whole); err != nil {
			return nil, fmt.Errorf("openaisdk: the response: %w", err)
		}
		if len(whole.Output) > 0 {
			return whole.Output, nil
		}
	}
	b, err := json.Marshal(resp.Output)
	if err != nil {
		return nil, fmt.Errorf("openaisdk: encode the output: %w", err)
	}
	return b, nil
}

func rawOf(raw string, v any) (json.RawMessage, error) {
	if raw != "" {
		return json.RawMessage(raw), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("openaisdk: encode: %w", err)
	}
	return b, nil
}

func formatOf(res *round.Result, want round.Format) error {
	if res == nil {
		return errors.New("openaisdk: no result")
	}
	if res.Format.Name() != want {
		return fmt.Errorf("openaisdk: the round is in format %s, not %s", res.Format.Name(), want)
	}
	return nil
}
