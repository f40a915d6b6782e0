import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.mark.parametrize("script,module", [("langgraph_agent.py", "langgraph"), ("openai_agents_agent.py", "agents")])
def test_example_runs(url, approver, session, workdir, script, module):
    if os.environ.get("CI") != "true":
        pytest.importorskip(module)
    env = dict(os.environ, CONSOLE_URL=url, CONSOLE_TOKEN=approver.token, SESSION=session, RUN="example", APPROVE="yes")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", script)], env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "answer.txt" in out.stdout
    with open(os.path.join(workdir, "answer.txt")) as f:
        assert f.read() == "42\n"
