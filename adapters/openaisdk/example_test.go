package openaisdk_test

import (
	"context"
	"log"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/toolround/toolround/adapters/openaisdk"
	"github.com/toolround/toolround/client"
	"github.com/toolround/toolround/round"
)

// ExampleChatTurn is an agent loop on chat completions: each turn's tool
// calls run as one durable round of the run, and its tool messages go
// back into the conversation.
func ExampleChatTurn() {
	ctx := context.Background()
	c, err := client.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	run := c.NewRun("my-session", "run-1", round.Input{Provider: "openai"})

	oc := openai.NewClient() // OPENAI_API_KEY
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-5",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Summarise a.txt")},
	}
	for {
		completion, err := oc.Chat.Completions.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		msg := &completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			log.Println(msg.Content)
			return
		}
		turn, err := openaisdk.ChatTurn(msg)
		if err != nil {
			log.Fatal(err)
		}
		res, err := run.Round(ctx, turn)
		if err != nil {
			log.Fatal(err)
		}
		results, err := openaisdk.ToolMessages(res)
		if err != nil {
			log.Fatal(err)
		}
		params.Messages = append(append(params.Messages, msg.ToParam()), results...)
	}
}

// ExampleResponseItems is an agent loop on the Responses API, stateless
// (store false): the response's output items, reasoning included, and the
// round's function_call_output items are the next request's input.
func ExampleResponseItems() {
	ctx := context.Background()
	c, err := client.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	run := c.NewRun("my-session", "run-2", round.Input{Provider: "openai"})

	oc := openai.NewClient()
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Summarise a.txt", responses.EasyInputMessageRoleUser)}
	for {
		resp, err := oc.Responses.New(ctx, responses.ResponseNewParams{
			Model:   "gpt-5",
			Input:   responses.ResponseNewParamsInputUnion{OfInputItemList: input},
			Store:   openai.Bool(false),
			Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		})
		if err != nil {
			log.Fatal(err)
		}
		if !hasCalls(resp) {
			log.Println(resp.OutputText())
			return
		}
		turn, err := openaisdk.ResponseTurn(resp)
		if err != nil {
			log.Fatal(err)
		}
		res, err := run.Round(ctx, turn)
		if err != nil {
			log.Fatal(err)
		}
		items, err := openaisdk.ResponseItems(resp, res)
		if err != nil {
			log.Fatal(err)
		}
		input = append(input, items...)
	}
}

// hasCalls says whether a response asks for function calls.
func hasCalls(resp *responses.Response) bool {
	for _, item := range resp.Output {
		if item.Type == "function_call" {
			return true
		}
	}
	return false
}
