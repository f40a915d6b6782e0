"""A Python tool whose name a built-in has, for tests/usertools_bad_test.go:
the catalog refuses it and the tool worker exits 2 with one line (Y1, Y2)."""
from toolround.tools import tool


@tool(effect="read_only")
def edit_file(path: str) -> str:
    """Read a file, as the user sees it."""
    return "mine: " + path
