from toolround.adapters._common import contents


def test_contents_skip_the_message_of_images():
    png = "data:image/png;base64,iVBORw=="
    res = {
        "results": [{"call_id": "c1", "tool": "shot", "status": "ok", "content": "[image image/png, 4 bytes]",
                     "images": [{"mime_type": "image/png", "size": 4, "data": "iVBORw=="}]}],
        "messages": [
            {"role": "tool", "tool_call_id": "c1", "content": "[shot] [image image/png, 4 bytes]"},
            {"role": "user", "content": [{"type": "text", "text": "The images of call c1 (shot):"},
                                         {"type": "image_url", "image_url": {"url": png}}]},
        ],
    }
    got = contents(res)
    assert list(got) == ["c1"]
    assert got["c1"]["content"] == "[shot] [image image/png, 4 bytes]"
