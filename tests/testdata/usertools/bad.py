"""A Python tool worker's tools that misbehave, for tests/usertools_test.go:
each call must end in a result with a clear error (or a large result kept
in the blob store), never a crash of the round or of the tool worker."""
import asyncio
import os

from toolround.tools import tool

MARKS = os.environ.get("MARKS", ".")


def _mark(name: str) -> None:
    with open(os.path.join(MARKS, name), "a", encoding="utf-8") as f:
        f.write("ran\n")


@tool(effect="read_only")
def bad_raises(why: str) -> str:
    """Raise a plain exception, every attempt."""
    _mark("raises")
    raise RuntimeError("the lookup broke: " + why)


@tool(effect="side_effect")
def bad_raises_once(why: str) -> str:
    """Raise a plain exception in a side-effecting tool."""
    _mark("raises_once")
    raise RuntimeError("the write broke: " + why)


@tool(effect="read_only")
def bad_not_json(n: int) -> object:
    """Return something that is not JSON."""
    return {"n": n, "set": {1, 2}}


@tool(effect="read_only")
def bad_huge(mib: int) -> str:
    """Return mib MiB of text."""
    return "x" * (mib << 20)


@tool(effect="read_only")
def bad_large(kib: int) -> str:
    """Return kib KiB of text: more than history keeps, less than the limit."""
    return ("large-" * (kib << 10))[: kib << 10]


@tool(effect="read_only", timeout=2, heartbeat=3)
async def bad_forever(n: int) -> str:
    """Never return."""
    _mark("forever")
    await asyncio.sleep(3600)
    return "never"
