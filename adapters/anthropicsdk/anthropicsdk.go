// Package anthropicsdk converts between the official Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go) and toolround's rounds (U9): a
// Messages API response becomes a round in format anthropic (F1), and a
// round's result becomes the user message of tool_result blocks to append
// to the conversation (F2). It is a module of its own, so the SDK is a
// dependency of the programs that use it and of no other.
//
//	msg, _ := ac.Messages.New(ctx, params)        // the model's turn
//	turn, _ := anthropicsdk.Turn(msg)
//	res, _ := run.Round(ctx, turn)                // a client.RunHandle
//	results, _ := anthropicsdk.ToolResults(res)
//	params.Messages = append(params.Messages, msg.ToParam(), results)
package anthropicsdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolround/toolround/round"
)

// Turn is the round input's turn for a Messages API response: format
// anthropic with the message as the API sent it (thinking blocks with their
// signatures pass through; a turn cut off at max_tokens runs no call). Give
// it to client.RunHandle.Round, or set the session, run and round numbers
// and submit it.
func Turn(msg *anthropic.Message) (round.Input, error) {
	if msg == nil {
		return round.Input{}, errors.New("anthropicsdk: no message")
	}
	raw := json.RawMessage(msg.RawJSON())
	if len(raw) == 0 {
		b, err := json.Marshal(msg)
		if err != nil {
			return round.Input{}, fmt.Errorf("anthropicsdk: encode the message: %w", err)
		}
		raw = b
	}
	in := round.Input{Format: round.FormatAnthropic, Turn: raw}
	if _, err := in.TurnCalls(); err != nil {
		return round.Input{}, fmt.Errorf("anthropicsdk: %w", err)
	}
	return in, nil
}

// Input is the whole round input of a Messages API response: round n of
// run runID in session sessionID, with the run state the round before
// returned.
func Input(sessionID, runID string, n int, state *round.RunState, msg *anthropic.Message) (round.Input, error) {
	in, err := Turn(msg)
	if err != nil {
		return round.Input{}, err
	}
	in.SessionID, in.RunID, in.Round, in.State = sessionID, runID, n, state
	return in, nil
}

// ToolResults is the user message that follows the turn: one tool_result
// block per call, in call order, is_error set for the statuses F2 lists,
// as the round gave them back. The result must be of a round in format
// anthropic.
func ToolResults(res *round.Result) (anthropic.MessageParam, error) {
	if res == nil {
		return anthropic.MessageParam{}, errors.New("anthropicsdk: no result")
	}
	if res.Format.Name() != round.FormatAnthropic {
		return anthropic.MessageParam{}, fmt.Errorf("anthropicsdk: the round is in format %s, not anthropic", res.Format.Name())
	}
	msgs := res.Messages
	if len(msgs) == 0 {
		msgs = round.FormatAnthropic.Messages(res.Results)
	}
	if len(msgs) != 1 {
		return anthropic.MessageParam{}, fmt.Errorf("anthropicsdk: the round gave %d messages, not one", len(msgs))
	}
	b, err := json.Marshal(msgs[0])
	if err != nil {
		return anthropic.MessageParam{}, fmt.Errorf("anthropicsdk: encode the results: %w", err)
	}
	var p anthropic.MessageParam
	if err := json.Unmarshal(b, &p); err != nil {
		return anthropic.MessageParam{}, fmt.Errorf("anthropicsdk: the results as a message: %w", err)
	}
	return p, nil
}
