package anthropicsdk_test

import (
	"context"
	"log"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolround/toolround/adapters/anthropicsdk"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// ExampleTurn is an agent loop on the Messages API: each turn's tool_use
// blocks run as one durable round of the run, the turn goes back as the
// API sent it (thinking blocks with their signatures), and the round's
// tool_result blocks follow it as one user message.
func ExampleTurn() {
	ctx := context.Background()
	c, err := client.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	run := c.NewRun("my-session", "run-1", round.Input{Provider: "anthropic"})

	ac := anthropic.NewClient() // ANTHROPIC_API_KEY
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-5-5",
		MaxTokens: 4096,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Summarise a.txt"))},
	}
	for {
		msg, err := ac.Messages.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			for _, block := range msg.Content {
				log.Println(block.Text)
			}
			return
		}
		turn, err := anthropicsdk.Turn(msg)
		if err != nil {
			log.Fatal(err)
		}
		res, err := run.Round(ctx, turn)
		if err != nil {
			log.Fatal(err)
		}
		results, err := anthropicsdk.ToolResults(res)
		if err != nil {
			log.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam(), results)
	}
}
