"""The secrets a call sends its tool (SPEC Y3, T9): the round seals the
values of the call's {{secret:NAME}} placeholders with the tool worker's
queue key; the tool worker opens them, puts them in the arguments' strings,
and seals its answer with the same key, so that toolround redacts the
values before anything enters workflow history.

The queue key is TOOLROUND_TOOL_KEY (what `starter tool-key QUEUE` prints),
else derived from toolround's own secret key when this process can read it
(TOOLROUND_SECRET_KEY, TOOLROUND_SECRET_KEY_FILE, or the default key file).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

SEALED_PREFIX = "sealed:v1:"
ENV_TOOL_KEY = "TOOLROUND_TOOL_KEY"
FAILURE_SEALED = "ToolFailureSealed"
_REF = re.compile(r"\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}")


class SecretsUnavailable(Exception):
    """The call sends secrets this tool worker cannot open."""


def _decode_key(text: str, where: str) -> bytes:
    text = text.strip()
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        for padded in (text, text + "=" * (-len(text) % 4)):
            try:
                key = decode(padded.encode("ascii"))
            except (binascii.Error, ValueError, UnicodeEncodeError):
                continue
            if len(key) != 32:
                raise SecretsUnavailable("%s is %d bytes, want 32 (the base64 of 32 random bytes)" % (where, len(key)))
            return key
    raise SecretsUnavailable("%s is not base64 (want the base64 of 32 random bytes)" % where)


def _default_key_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolround" / "secret.key"


def queue_key(queue: str) -> bytes:
    """The key of queue's sealed secrets; SecretsUnavailable when there is none."""
    v = os.environ.get(ENV_TOOL_KEY)
    if v:
        return _decode_key(v, ENV_TOOL_KEY)
    master: Optional[bytes] = None
    if os.environ.get("TOOLROUND_SECRET_KEY"):
        master = _decode_key(os.environ["TOOLROUND_SECRET_KEY"], "TOOLROUND_SECRET_KEY")
    else:
        path = Path(os.environ.get("TOOLROUND_SECRET_KEY_FILE") or _default_key_file())
        try:
            master = _decode_key(path.read_text(), str(path))
        except OSError:
            raise SecretsUnavailable("no %s is set; run `starter tool-key %s` where toolround's secret key is, "
                                     "and give this tool worker what it prints" % (ENV_TOOL_KEY, queue)) from None
    return hmac.new(master, b"toolround tool secrets v1\x00" + queue.encode("utf-8"), hashlib.sha256).digest()


def _aead(key: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:  # pragma: no cover - the tools extra requires it
        raise SecretsUnavailable("the package cryptography is missing: pip install 'toolround[tools]'") from None
    return AESGCM(key)


def seal(key: bytes, plaintext: str) -> str:
    """AES-256-GCM of plaintext under key, as toolround seals: the prefix, then
    the base64 of the 12-byte nonce and the ciphertext with its tag."""
    nonce = os.urandom(12)
    out = _aead(key).encrypt(nonce, plaintext.encode("utf-8"), None)
    return SEALED_PREFIX + base64.b64encode(nonce + out).decode("ascii")


def open_sealed(key: bytes, sealed: str) -> str:
    if not isinstance(sealed, str) or not sealed.startswith(SEALED_PREFIX):
        raise SecretsUnavailable("a value is not sealed")
    try:
        raw = base64.b64decode(sealed[len(SEALED_PREFIX):], validate=True)
        return _aead(key).decrypt(raw[:12], raw[12:], None).decode("utf-8")
    except SecretsUnavailable:
        raise
    except Exception:
        raise SecretsUnavailable("a value does not open with this key") from None


def with_secrets(value: Any, values: Dict[str, str]) -> Any:
    """value with every {{secret:NAME}} the call sent replaced in its strings."""
    if isinstance(value, str):
        return _REF.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [with_secrets(v, values) for v in value]
    if isinstance(value, dict):
        return {k: with_secrets(v, values) for k, v in value.items()}
    return value


def open_call(envelope: Dict[str, Any], queue: str) -> Tuple[bytes, Dict[str, Any]]:
    """The queue key and the envelope with the secrets' values in its
    arguments; SecretsUnavailable when they do not open."""
    key = queue_key(queue)
    sent = envelope.get("secrets")
    if not isinstance(sent, dict):
        raise SecretsUnavailable("the envelope's secrets are not an object")
    values = {}
    for name, sealed in sent.items():
        try:
            values[name] = open_sealed(key, sealed)
        except SecretsUnavailable:
            raise SecretsUnavailable("secret %s does not open with this tool worker's key for queue %s (%s holds another "
                                     "queue's key, or toolround's key changed)" % (name, queue, ENV_TOOL_KEY)) from None
    try:
        args = json.loads(envelope.get("args_json") or "{}")
    except ValueError:
        return key, envelope  # the call reports its arguments as it would
    out = dict(envelope, args_json=json.dumps(with_secrets(args, values)))
    out.pop("secrets", None)
    return key, out
