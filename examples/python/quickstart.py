import os
import toolround

c = toolround.Client(os.environ.get("CONSOLE_URL", "http://127.0.0.1:8780"), os.environ["CONSOLE_TOKEN"])
run = c.run("demo", "py-%d" % os.getpid(), provider="claude-code")  # keeps the run state and the round number
def call(name, args): return {"id": name, "type": "function", "function": {"name": name, "arguments": args}}
run.round([call("find_tools", '{"query": "select:calculate"}')])
res = run.round([call("calculate", '{"expression": "6*7"}')], on_approval=lambda p: toolround.Decision(True))
print(res["messages"][0]["content"], "(round %d)" % run.number)
