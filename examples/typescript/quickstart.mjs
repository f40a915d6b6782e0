import { Client } from "toolround";

const c = new Client(process.env.CONSOLE_URL ?? "http://127.0.0.1:8780", process.env.CONSOLE_TOKEN);
const run = c.run("demo", `ts-${process.pid}`, { provider: "claude-code" }); // keeps the run state and the round number
const call = (name, args) => ({ id: name, type: "function", function: { name, arguments: args } });
await run.round([call("find_tools", '{"query": "select:calculate"}')]);
const res = await run.round([call("calculate", '{"expression": "6*7"}')], { onApproval: () => true });
console.log(res.messages[0].content, `(round ${run.number})`);
