"""A tool worker of its own for the LangChain tools of lg_orders.py, on
TOOL_QUEUE: the process test_langgraph_own.py kills."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lg_orders import OPTIONS, READ_ONLY, TOOLS  # noqa: E402

from toolround.adapters.langgraph import serve  # noqa: E402

serve(TOOLS, os.environ["TOOL_QUEUE"], read_only=READ_ONLY, tool_options=OPTIONS)
