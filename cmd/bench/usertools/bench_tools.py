"""The benchmark's Python user tool (`make bench`, case pytool10): served by
`python -m toolround.tools serve` on a queue of its own, it answers at once,
so that the round measures what a call to a tool worker costs."""

from toolround.tools import tool


@tool(effect="read_only", concurrent=True)
def bench_py_lookup(n: int) -> str:
    """Does nothing and answers ok; n keeps the calls of a round distinct."""
    return "ok"
