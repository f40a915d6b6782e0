package round

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// png is the start of a PNG file: bytes that are not text.
var png = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0xff, 0xfe}

func imageResults() []CallResult {
	return []CallResult{
		{CallID: "c1", Tool: "mcp_shot", Status: StatusOK, Content: "[image image/png, 18 bytes]",
			Images: []Image{{MIMEType: "image/png", Size: len(png), Data: png}}},
		{CallID: "c2", Tool: "calculate", Status: StatusOK, Content: "2"},
		{CallID: "c3", Tool: "mcp_big", Status: StatusOK, Content: "[image image/jpeg, 9000000 bytes]",
			Images: []Image{{MIMEType: "image/jpeg", Size: 9000000, Ref: "blob:9"}}},
	}
}

func TestImagesInAnthropicToolResults(t *testing.T) {
	m := marshalAll(t, FormatAnthropic.Messages(imageResults()))
	require.Len(t, m, 1)
	data := base64.StdEncoding.EncodeToString(png)
	require.JSONEq(t, `{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"c1","is_error":false,"content":[
			{"type":"text","text":"[mcp_shot] [image image/png, 18 bytes]"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+data+`"}}]},
		{"type":"tool_result","tool_use_id":"c2","content":"[calculate] 2","is_error":false},
		{"type":"tool_result","tool_use_id":"c3","is_error":false,
			"content":"[mcp_big] [image image/jpeg, 9000000 bytes]\n[image 1 (image/jpeg, 9000000 bytes) is kept by reference only: blob:9]"}]}`, m[0])
}

func TestImagesInResponsesOutputs(t *testing.T) {
	m := marshalAll(t, FormatResponses.Messages(imageResults()))
	require.Len(t, m, 3)
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	require.JSONEq(t, `{"type":"function_call_output","call_id":"c1","output":[
		{"type":"input_text","text":"[mcp_shot] [image image/png, 18 bytes]"},
		{"type":"input_image","image_url":"`+url+`"}]}`, m[0])
	require.JSONEq(t, `{"type":"function_call_output","call_id":"c2","output":"[calculate] 2"}`, m[1])
	require.Contains(t, m[2], "blob:9")
	require.NotContains(t, m[2], "input_image", "an image kept by reference only is not sent")
}

func TestImagesInOpenAIAreTheirTextLine(t *testing.T) {
	msgs := FormatOpenAI.Messages(imageResults())
	require.Len(t, msgs, 3, "one tool message per call (P3.1), no message of images after them")
	for i, id := range []string{"c1", "c2", "c3"} {
		require.Equal(t, "tool", msgs[i].Role)
		require.Equal(t, id, msgs[i].ToolCallID)
		require.Empty(t, msgs[i].Raw)
	}
	require.Equal(t, "[mcp_shot] [image image/png, 18 bytes]", msgs[0].Content, "the tool message is the text line (F2)")
	require.Contains(t, msgs[2].Content, "kept by reference only: blob:9")
	require.NotContains(t, marshalAll(t, msgs)[0], base64.StdEncoding.EncodeToString(png), "no bytes in a chat tool message")
}

func TestResultWithImagesReadsBack(t *testing.T) {
	for _, f := range Formats {
		out := Output{WorkflowID: "w", Format: f, Results: imageResults()}
		if f == FormatOpenAI {
			out.Format = ""
			out.Assistant = Message{Role: "assistant"}
		}
		res := out.Result()
		b, err := json.Marshal(res)
		require.NoError(t, err)
		var back Result
		require.NoError(t, json.Unmarshal(b, &back), f)
		require.Equal(t, png, back.Results[0].Images[0].Data, f)
		b2, err := json.Marshal(back)
		require.NoError(t, err)
		require.JSONEq(t, string(b), string(b2), "%s: a result with images reads back as it was written", f)
	}
}
