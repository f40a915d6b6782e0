import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.mark.parametrize("script,module", [("langgraph_agent.py", "langgraph"), ("openai_agents_agent.py", "agents")])
def test_example_runs(url, approver, session, workdir, script, module):
    if os.environ.get("CI") != "true":
        pytest.importorskip(module)
    env = dict(os.environ, CONSOLE_URL=url, CONSOLE_TOKEN=approver.token, SESSION=session, RUN="example", APPROVE="yes",
               TOOL_QUEUE=os.environ.get("TOOLROUND_TOOL_QUEUE", "my-tools"))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", script)], env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "answer.txt" in out.stdout
    assert "order A-1: shipped" in out.stdout, "the app's own tool ran in a round"
    with open(os.path.join(workdir, "answer.txt")) as f:
        assert f.read() == "42\n"


def test_quickstart_is_the_readme_snippet_and_runs(url, approver):
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    section = readme[readme.index("### Other languages"):]
    snippet = section[section.index("```python\nimport os\n") + len("```python\n"):]
    snippet = snippet[:snippet.index("```")]
    path = os.path.join(ROOT, "examples", "python", "quickstart.py")
    with open(path) as f:
        assert f.read() == snippet, "README's Python snippet is examples/python/quickstart.py"
    assert len(snippet.strip().splitlines()) <= 10
    env = dict(os.environ, CONSOLE_URL=url, CONSOLE_TOKEN=approver.token)
    out = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "42" in out.stdout and "(round 2)" in out.stdout, out.stdout
