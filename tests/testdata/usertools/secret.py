"""secret_echo in Python, for TestUserToolSecretsY3: the Go and TypeScript
tool workers serve the same tool, and the test compares."""
import base64
import hashlib

from toolround.tools import ToolError, tool


@tool(effect="side_effect")
def secret_echo(token: str, note: str) -> dict:
    """Echo a token back in several encodings."""
    if note == "fail":
        raise ToolError("the server refused token " + token)
    if note == "raise":
        raise RuntimeError("the connection dropped while sending " + token)
    raw = token.encode()
    return {"echo": token, "b64": base64.b64encode(raw).decode(), "hex": raw.hex(),
            "sha256": hashlib.sha256(raw).hexdigest(), "note": note}
