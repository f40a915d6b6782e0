package round

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Images in each format's messages (F2). A tool message keeps its text (an
// MCP image is a line "[image MIME, N bytes]" in Content, so a text-only
// caller still sees that it was there); the images a result carries go in
// the format's own objects beside it: image blocks in an Anthropic
// tool_result's content, input_image parts of a Responses
// function_call_output's output. A chat-completions tool message holds
// only text, so in format openai an image is its text line alone (F2) and
// its bytes are in the result's images; messages stay one tool message per
// call (P3.1).

// sent are the images of r whose bytes the messages carry.
func (r *CallResult) sent() []Image {
	var out []Image
	for _, im := range r.Images {
		if len(im.Data) > 0 {
			out = append(out, im)
		}
	}
	return out
}

// imageText is r's message text with a line for each image whose bytes
// the messages do not carry: kept by reference, or not kept at all.
func (r *CallResult) imageText() string {
	s := NotedContent(r.Tool, r.Repeat.Note(), r.Content)
	var lines []string
	for i, im := range r.Images {
		switch {
		case len(im.Data) > 0:
		case im.Ref != "":
			lines = append(lines, fmt.Sprintf("[image %d (%s, %d bytes) is kept by reference only: %s]", i+1, im.MIMEType, im.Size, im.Ref))
		default:
			lines = append(lines, fmt.Sprintf("[image %d (%s, %d bytes) was not kept]", i+1, im.MIMEType, im.Size))
		}
	}
	if len(lines) == 0 {
		return s
	}
	return s + "\n" + strings.Join(lines, "\n")
}

// DataURL is the image as a data: URL, as the OpenAI APIs take it.
func (im Image) DataURL() string {
	return "data:" + im.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicImage struct {
	Type   string `json:"type"`
	Source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// anthropicContent is a tool_result's content: its text, or, with images,
// a text block and an image block per image.
func (r *CallResult) anthropicContent() any {
	ims := r.sent()
	text := r.imageText()
	if len(ims) == 0 {
		return text
	}
	parts := []any{textPart{Type: "text", Text: text}}
	for _, im := range ims {
		b := anthropicImage{Type: "image"}
		b.Source.Type, b.Source.MediaType, b.Source.Data = "base64", im.MIMEType, base64.StdEncoding.EncodeToString(im.Data)
		parts = append(parts, b)
	}
	return parts
}

type responsesImage struct {
	Type     string `json:"type"`
	ImageURL string `json:"image_url"`
}

// responsesOutput is a function_call_output's output: its text, or, with
// images, an input_text part and an input_image part per image.
func (r *CallResult) responsesOutput() any {
	ims := r.sent()
	text := r.imageText()
	if len(ims) == 0 {
		return text
	}
	parts := []any{textPart{Type: "input_text", Text: text}}
	for _, im := range ims {
		parts = append(parts, responsesImage{Type: "input_image", ImageURL: im.DataURL()})
	}
	return parts
}
