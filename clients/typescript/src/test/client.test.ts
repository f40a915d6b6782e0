import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { Client, ToolroundError, isFinished, roundWorkflowId, type Event, type PendingCall, type RoundResult } from "../index.js";
import { ALL_TOOLS, call, live, roundInput, skip } from "./live.js";

async function rejects(p: Promise<unknown>, status: number, code: string | string[]): Promise<ToolroundError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ToolroundError, `a ToolroundError, not ${e}`);
    assert.equal(e.status, status, e.message);
    assert.ok(([] as string[]).concat(code).includes(e.code), `code ${e.code}, want ${code}`);
    return e;
  }
  assert.fail(`no error, want ${status} ${code}`);
}

test("submit and read a round", { skip }, async () => {
  const { agent, session } = live("submit");
  const inp = roundInput(session, 1, [call("c1", "calculate", { expression: "6*7" })]);
  const wid = await agent.submitRound(inp);
  assert.equal(wid, roundWorkflowId(session, "r1", 1));
  // Submitting the same round again attaches to it: the same id.
  assert.equal(await agent.submitRound(inp), wid);
  const deadline = Date.now() + 60_000;
  let res = await agent.getRound(wid);
  while (!isFinished(res)) {
    assert.equal(res.status, "running");
    assert.ok(Date.now() < deadline, "the round did not finish");
    await new Promise((r) => setTimeout(r, 200));
    res = await agent.getRound(wid);
  }
  assert.equal(res.workflow_id, wid);
  assert.equal(res.results?.[0].status, "ok");
  assert.match(res.results?.[0].content ?? "", /42/);
  assert.equal(res.messages?.[0].tool_call_id, "c1");
});

test("errors are typed with the server's code", { skip }, async () => {
  const { agent, approver, session, url } = live("errors");
  const bad = { session_id: session, run_id: "r1", round: 1, asistant: {} } as never;
  const e = await rejects(agent.submitRound(bad), 400, "invalid_input");
  assert.match(e.detail, /assistant/, "the closest known name");
  await rejects(agent.approve(roundWorkflowId(session, "r1", 1), "c1", "x"), 403, "forbidden");
  await rejects(approver.getRound(roundWorkflowId(session, "none", 9)), 404, "not_found");
  await rejects(approver.approve(roundWorkflowId(session, "none", 9), "c1", "x"), 404, ["not_waiting", "not_found"]);
  await rejects(new Client(url, "not-a-token").inbox(), 401, "unauthorized");
  const auto = { ...roundInput(session, 2, [call("c1", "calculate", { expression: "1" })]), auto_approve: true };
  await rejects(agent.submitRound(auto), 403, "forbidden");
  // An event stream refused by the console throws too, instead of retrying.
  await rejects(new Client(url, "not-a-token").events(session).next(), 401, "unauthorized");
});

test("bad input is refused before any request", async () => {
  assert.throws(() => new Client(""), TypeError);
  assert.throws(() => new Client("127.0.0.1:8780"), /not an http or https URL|not a URL/);
  const c = new Client("http://127.0.0.1:9", "t", { retries: 0 });
  await assert.rejects(c.getRound(""), TypeError);
  await assert.rejects(c.submitRound(null as never), TypeError);
  assert.throws(() => c.run("", "r"), TypeError);
});

test("runRound with an approval handler", { skip }, async () => {
  const { approver, session, workdir } = live("approval");
  const seen: PendingCall[] = [];
  const inp = roundInput(session, 1, [call("e1", "edit_file", { path: "ts.txt", new_text: "from typescript\n" })]);
  const res = await approver.runRound(inp, {
    onApproval: (p) => {
      seen.push(p);
      return { approve: true, reason: "fine" };
    },
    timeoutMs: 120_000,
  });
  assert.deepEqual(seen.map((p) => p.call_id), ["e1"]);
  assert.ok(seen[0].approval_id);
  const r = res.results![0];
  assert.equal(r.status, "ok", JSON.stringify(r));
  assert.equal(r.approval?.decision, "approved");
  assert.equal(r.approval?.by, "alice");
  assert.equal(r.approval?.via, "api");
  assert.equal(readFileSync(join(workdir, "ts.txt"), "utf8"), "from typescript\n");
});

test("deny and edited arguments", { skip }, async () => {
  const { approver, session, workdir } = live("deny");
  let res = await approver.runRound(roundInput(session, 1, [call("e1", "edit_file", { path: "denied.txt", new_text: "no" })]), {
    onApproval: () => ({ approve: false, reason: "not today" }),
    timeoutMs: 120_000,
  });
  assert.equal(res.results![0].status, "skipped");
  assert.ok(!existsSync(join(workdir, "denied.txt")));
  const edited = { path: "edited-ts.txt", new_text: "edited\n" };
  res = await approver.runRound(roundInput(session, 2, [call("e2", "edit_file", { path: "orig-ts.txt", new_text: "orig" })]), {
    onApproval: () => ({ approve: true, args: edited }),
    timeoutMs: 120_000,
  });
  assert.equal(res.results![0].status, "ok");
  assert.equal(res.results![0].approval?.edited, true);
  assert.ok(existsSync(join(workdir, "edited-ts.txt")));
  assert.ok(!existsSync(join(workdir, "orig-ts.txt")));
});

test("inbox, stale approval, invalid args and a repeated decision", { skip }, async () => {
  const { approver, agent, session } = live("inbox");
  const wid = await agent.submitRound(
    roundInput(session, 1, [call("e1", "edit_file", { path: "wait.txt", new_text: "x" }), call("e2", "edit_file", { path: "wait2.txt", new_text: "y" })]),
  );
  const deadline = Date.now() + 60_000;
  let entries = await agent.inbox(session);
  while (!entries.length) {
    assert.ok(Date.now() < deadline, "the round never waited");
    await new Promise((r) => setTimeout(r, 200));
    entries = await agent.inbox(session);
  }
  assert.equal(entries[0].workflow_id, wid);
  const p = entries[0].pending!.find((c) => c.call_id === "e1")!;
  await rejects(approver.approve(wid, p.call_id, "not-its-approval-id"), 409, "stale_approval");
  await rejects(approver.approve(wid, p.call_id, p.approval_id, { args: { path: 1 } }), 400, "invalid_args");
  // T12: a scope is a remembered rule's.
  await rejects(approver.approve(wid, p.call_id, p.approval_id, { scope: "write" }), 400, "invalid_decision");
  const first = await approver.deny(wid, p.call_id, p.approval_id, "test");
  assert.equal(first.decision, "denied");
  assert.equal(first.status, undefined);
  // The round still waits for e2: a retry of the same decision is told it
  // already landed; another decision for the call is refused.
  const again = await approver.deny(wid, p.call_id, p.approval_id);
  assert.deepEqual([again.decision, again.status], ["denied", "already_decided"]);
  await rejects(approver.approve(wid, p.call_id, p.approval_id), 404, "not_waiting");
  const view = await approver.getRound(wid);
  if (!isFinished(view)) await approver.cancel(wid);
});

test("limit waits reach onApproval and decisions carry their wait_id", { skip }, async () => {
  // B1, X2: a call past a run limit waits as kind "limit"; onApproval gets
  // it, and the decision carries the wait's wait_id.
  const { approver, agent, session } = live("limit");
  const seen: PendingCall[] = [];
  const inp = roundInput(session, 1, [call("c1", "calculate", { expression: "1+1" }), call("c2", "calculate", { expression: "2+2" })]);
  inp.limits = { max_calls: 1 };
  const res = await approver.runRound(inp, {
    onApproval: (p) => {
      seen.push(p);
      return { approve: true, reason: "one more" };
    },
    timeoutMs: 120_000,
  });
  assert.deepEqual(seen.map((p) => [p.call_id, p.kind]), [["c2", "limit"]]);
  assert.equal(seen[0].wait_id?.length, 64);
  assert.deepEqual(seen[0].limits, [{ limit: "max_calls", count: 0, max: 1 }]);
  assert.deepEqual(res.results!.map((r) => r.status), ["ok", "ok"]);
  assert.deepEqual(res.results![1].approval?.limits, ["max_calls"]);

  const wid = await agent.submitRound({ ...roundInput(session, 2, [call("c3", "calculate", { expression: "3+3" })]), state: res.state });
  const deadline = Date.now() + 60_000;
  let entries = await agent.inbox(session);
  while (!entries.length) {
    assert.ok(Date.now() < deadline, "the round never waited");
    await new Promise((r) => setTimeout(r, 200));
    entries = await agent.inbox(session);
  }
  const p = entries[0].pending![0];
  assert.equal(p.kind, "limit");
  await rejects(approver.approve(wid, p.call_id, p.approval_id, { waitId: "0".repeat(64) }), 409, "stale_wait");
  const d = await approver.deny(wid, p.call_id, p.approval_id, "enough", p.wait_id);
  assert.equal(d.decision, "denied");
});

async function readUntil(it: AsyncIterable<Event>, lastId: string): Promise<string[]> {
  const got: string[] = [];
  for await (const ev of it) {
    got.push(ev.id);
    if (ev.id === lastId || got.length > 500) break;
  }
  return got;
}

test("events replay from the start and resume after an id", { skip }, async () => {
  const { agent, session } = live("events");
  const res = await agent.waitRound(roundInput(session, 1, [call("c1", "calculate", { expression: "2+2" })]));
  assert.equal(res.results![0].status, "ok");
  const got: Event[] = [];
  for await (const ev of agent.events(session, { fromStart: true })) {
    got.push(ev);
    if (ev.type === "round_finished" || got.length > 50) break;
  }
  const types = got.map((e) => e.type);
  assert.ok(types.includes("tool_result"), types.join(","));
  const ids = got.map((e) => e.id);
  const later = await readUntil(agent.events(session, { after: ids[0] }), ids[ids.length - 1]);
  assert.deepEqual(later, ids.slice(1));
});

test("events reconnect with Last-Event-ID after a dropped connection", { skip }, async () => {
  const { agent, session, url } = live("reconnect");
  let res: RoundResult | undefined;
  for (const n of [1, 2]) {
    res = await agent.waitRound(roundInput(session, n, [call(`c${n}`, "calculate", { expression: `${n}*3` })]));
  }
  const lastId = res!.events![res!.events!.length - 1].id;
  const ref = await readUntil(agent.events(session, { fromStart: true }), lastId);
  assert.equal(ref[ref.length - 1], lastId);
  assert.ok(ref.length > 4);

  // The first three connections drop after their first event: the
  // iterator reconnects with Last-Event-ID and no event is lost or repeated.
  const connections: (string | null)[] = [];
  const flaky: typeof fetch = async (input, init) => {
    connections.push(new Headers(init?.headers).get("Last-Event-ID"));
    const res = await fetch(input, init);
    if (connections.length > 3 || !res.body) return res;
    const reader = res.body.getReader();
    let buf = "";
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        const { value, done } = await reader.read();
        if (done) return ctl.close();
        buf += new TextDecoder().decode(value);
        const end = buf.search(/\ndata: .*\n\n/);
        if (end >= 0) {
          const cut = buf.indexOf("\n\n", end + 1) + 2;
          ctl.enqueue(new TextEncoder().encode(buf.slice(0, cut)));
          await reader.cancel();
          ctl.error(new TypeError("terminated"));
          return;
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  const c = new Client(url, agent.token, { fetch: flaky });
  const got = await readUntil(c.events(session, { fromStart: true, reconnectMs: 50 }), lastId);
  assert.deepEqual(got, ref);
  assert.deepEqual(connections.slice(0, 4), [null, ref[0], ref[1], ref[2]]);
});

test("network errors are retried only where repeating is harmless", async () => {
  let tries = 0;
  const refuse: typeof fetch = async () => {
    tries++;
    throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") });
  };
  const c = new Client("http://127.0.0.1:9", "t", { retries: 2, backoffMs: 1, fetch: refuse });
  const idempotent = [
    () => c.getRound("toolround/s/r/1"),
    () => c.inbox(),
    () => c.submitRound({ session_id: "s", run_id: "r", assistant: { role: "assistant" } }),
    () => c.startAgent("s", "r", "t"),
    () => c.getAgent("agentrun/s/r"),
    () => c.tools({ provider: "openai" }),
  ];
  for (const op of idempotent) {
    tries = 0;
    const e = await rejects(op(), 0, "network");
    assert.match(e.message, /ECONNREFUSED/);
    assert.equal(tries, 3);
  }
  const once = [
    () => c.approve("w", "c", "a"),
    () => c.deny("w", "c", "a"),
    () => c.answer("w", "c", ["x"]),
    () => c.cancel("w"),
    () => c.sendMessage("agentrun/s/r", "hi"),
    () => c.extend("w", "c", 5),
    () => c.submitToolResult("w", "c", "x"),
  ];
  for (const op of once) {
    tries = 0;
    await rejects(op(), 0, "network");
    assert.equal(tries, 1);
  }
  // An answer of the console is never retried.
  tries = 0;
  const busy: typeof fetch = async () => {
    tries++;
    return new Response(JSON.stringify({ error: "no_worker", message: "no worker polls" }), { status: 503 });
  };
  const e = await rejects(new Client("http://127.0.0.1:9", "t", { fetch: busy }).getRound("toolround/s/r/1"), 503, "no_worker");
  assert.equal(e.detail, "no worker polls");
  assert.equal(tries, 1);
});

test("the run handle keeps the run state and the round number", { skip }, async () => {
  const { approver, session } = live("handle");
  const run = approver.run(session, "handle", { provider: "claude-code", state: { fetched: ALL_TOOLS } });
  assert.equal(run.number, 0);
  assert.ok(run.nextWorkflowId.endsWith("/handle/1"));
  let res = await run.round([call("c1", "calculate", { expression: "1+1" })]);
  assert.equal(run.number, 1);
  assert.equal(res.results![0].status, "ok");
  assert.equal(res.workflow_id, roundWorkflowId(session, "handle", 1));
  res = await run.round([call("r1", "read_files", { paths: ["missing.txt"] })]);
  assert.equal(run.number, 2);
  assert.deepEqual(run.state, res.state);
  // The same read again: deduped from round 2, which only the kept state knows.
  res = await run.round([call("r2", "read_files", { paths: ["missing.txt"] })]);
  assert.equal(run.number, 3);
  assert.ok(["deduped", "error"].includes(res.results![0].status), JSON.stringify(res.results![0]));
  // Rounds go one at a time.
  const first = run.round([call("c4", "calculate", { expression: "4" })]);
  await assert.rejects(run.round([call("c5", "calculate", { expression: "5" })]), /one at a time/);
  await first;
  assert.equal(run.number, 4);
  // A handle reopened after a crash finds the last finished round.
  const again = await approver.resumeRun(session, "handle");
  assert.equal(again.number, 4);
  assert.deepEqual(again.state, run.state);
  assert.equal(again.nextWorkflowId, roundWorkflowId(session, "handle", 5));
  assert.equal((await approver.resumeRun(session, "never-ran")).number, 0);
});

// docs/clients.md: the format of a round through the handle (F1), and a
// round of the run through the lower-level calls, which the handle learns
// of from resume().
test("the run handle in each format and beside the lower-level calls", { skip }, async () => {
  const { approver, session, workdir } = live("formats");
  const run = approver.run(session, "formats", { provider: "claude-code", state: { fetched: ALL_TOOLS } });
  let res = await run.round([call("c1", "calculate", { expression: "1+1" })]); // openai, the default
  assert.equal(res.results![0].status, "ok");
  const turn = { role: "assistant", content: [{ type: "text", text: "Adding." }, { type: "tool_use", id: "toolu_1", name: "calculate", input: { expression: "2+2" } }] };
  res = await run.round(turn as any, { fields: { format: "anthropic" } });
  assert.equal(res.format, "anthropic");
  assert.deepEqual([res.results![0].call_id, res.results![0].status], ["toolu_1", "ok"]);
  const output = [{ type: "function_call", call_id: "call_r1", name: "calculate", arguments: '{"expression": "3+3"}' }];
  res = await run.round(null as any, { fields: { format: "responses", output } as any });
  assert.equal(res.format, "responses");
  assert.deepEqual([res.results![0].call_id, res.results![0].status], ["call_r1", "ok"]);
  assert.equal(run.number, 3);

  const inp = run.input({ role: "assistant", content: "", tool_calls: [call("e1", "edit_file", { path: "low.txt", new_text: "x\n" })] });
  const wid = await approver.submitRound(inp);
  assert.equal(wid, run.nextWorkflowId);
  const deadline = Date.now() + 60_000;
  let approvalId: string | undefined;
  while (!approvalId) {
    const view = await approver.getRound(wid);
    approvalId = isFinished(view) ? undefined : (view.pending ?? []).find((p) => p.approval_id)?.approval_id ?? undefined;
    assert.ok(Date.now() < deadline, "the round never waited");
    if (!approvalId) await new Promise((r) => setTimeout(r, 100));
  }
  await approver.approve(wid, "e1", approvalId);
  res = await approver.waitRound(inp);
  assert.equal(res.results![0].status, "ok");
  assert.equal(run.number, 3, "the handle did not run round 4");
  assert.equal(await run.resume(), 4);
  assert.deepEqual(run.state, res.state);
  res = await run.round([call("c5", "calculate", { expression: "5+5" })]);
  assert.equal(res.workflow_id, roundWorkflowId(session, "formats", 5));
  assert.equal(readFileSync(join(workdir, "low.txt"), "utf8"), "x\n");
});

test("the OpenAPI document needs no token", { skip }, async () => {
  const { url } = live("openapi");
  const doc = await new Client(url).openapi();
  assert.match(String(doc.openapi), /^3\.1/);
  assert.ok("/api/v1/rounds" in (doc.paths as object));
});

test("an MCP server's request reaches onWait, and the form it returns is the answer", { skip }, async () => {
  // E1, X3: the call waits as kind "elicitation"; content that fails the
  // server's schema is 400 invalid_answer, and the object onWait returns
  // is the accepted form.
  const bookings = process.env.TOOLROUND_BOOKINGS;
  assert.ok(bookings, "TOOLROUND_BOOKINGS is set by tests/typescript_test.go");
  const { approver, session } = live("elicitation");
  const seen: PendingCall[] = [];
  const inp = roundInput(session, 1, [call("b1", "mcp_desk_book", { what: "a desk" })]);
  inp.state = { fetched: ["mcp_desk_book"] };
  inp.auto_approve = true;
  const wid = roundWorkflowId(session, "r1", 1);
  const res = await approver.runRound(inp, {
    onWait: async (p) => {
      seen.push(p);
      if (p.kind !== "elicitation") return null;
      const e = await rejects(
        approver.answerElicitation(wid, p.call_id, "accept", { content: { seats: 0 }, waitId: p.wait_id }),
        400,
        "invalid_answer",
      );
      assert.match(e.message, /date is required/);
      return { date: "2027-04-01", seats: 2 };
    },
    timeoutMs: 120_000,
  });
  assert.deepEqual(seen.map((p) => p.kind), ["elicitation"]);
  assert.equal(seen[0].elicitation?.server, "desk");
  assert.ok("date" in ((seen[0].elicitation?.requested_schema as { properties: Record<string, unknown> }).properties));
  const r = res.results![0];
  assert.equal(r.status, "ok", r.content);
  assert.equal(r.content, "booked a desk on 2027-04-01 for 2");
  assert.equal(readFileSync(bookings, "utf8"), "a desk 2027-04-01 2\n");
});

// A console that answers the round with `pending` once, then with a
// finished result, and records every request but the reads of the round
// (and answers no event stream: the loop polls).
function scripted(pending: PendingCall[]): { client: Client; sent: Array<[string, string, unknown]> } {
  const sent: Array<[string, string, unknown]> = [];
  let reads = 0;
  const f: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? "GET";
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status });
    if (url.pathname.endsWith("/events")) return json({ error: "forbidden", message: "no stream here" }, 403);
    if (method === "POST" && url.pathname === "/api/v1/rounds") return json({ workflow_id: "toolround/s/r/1" });
    if (method === "GET" && url.pathname.startsWith("/api/v1/rounds/")) {
      reads++;
      if (reads === 1) return json({ workflow_id: "toolround/s/r/1", status: "running", pending });
      return json({ workflow_id: "toolround/s/r/1", results: [], state: null });
    }
    sent.push([method, url.pathname + url.search, body]);
    if (body?.call_id === "gone") return json({ error: "not_waiting", message: "no call gone waits" }, 404);
    return json({ accepted: true });
  };
  return { client: new Client("http://127.0.0.1:9", "t", { retries: 0, fetch: f }), sent };
}

const input = { session_id: "s", run_id: "r", round: 1, assistant: { role: "assistant" } } as const;

test("onWait sends a client tool's result with its wait_id", async () => {
  // Y5, X3: {content, isError} or a string onWait returns for a
  // tool_result wait goes to /api/v1/tool-results with the pending entry's
  // wait_id; null leaves the call waiting; a call that stopped waiting
  // meanwhile (not_waiting) does not stop the round; ask_user keeps its
  // answers.
  const pending: PendingCall[] = [
    { call_id: "k1", tool: "ide_open", kind: "tool_result", wait_id: "w1" },
    { call_id: "k2", tool: "ide_open", kind: "tool_result", wait_id: "w2" },
    { call_id: "k3", tool: "ide_open", kind: "tool_result", wait_id: "w3" },
    { call_id: "gone", tool: "ide_open", kind: "tool_result", wait_id: "w4" },
    { call_id: "q1", tool: "ask_user", kind: "answer", questions: ["which?"] },
  ];
  const out: Record<string, unknown> = {
    k1: { content: "opened a.go" },
    k2: { content: "no such file", isError: true },
    k3: null,
    gone: "late",
    q1: ["this one"],
  };
  const { client, sent } = scripted(pending);
  const res = await client.runRound({ ...input }, { onWait: async (p) => out[p.call_id], pollMs: 10 });
  assert.deepEqual(res.results, []);
  const wid = "toolround/s/r/1";
  assert.deepEqual(sent, [
    ["POST", "/api/v1/tool-results", { workflow_id: wid, call_id: "k1", content: "opened a.go", wait_id: "w1" }],
    ["POST", "/api/v1/tool-results", { workflow_id: wid, call_id: "k2", content: "no such file", is_error: true, wait_id: "w2" }],
    ["POST", "/api/v1/tool-results", { workflow_id: wid, call_id: "gone", content: "late", wait_id: "w4" }],
    ["POST", "/api/v1/answers", { workflow_id: wid, call_id: "q1", answers: ["this one"] }],
  ]);
});

test("onWait's answer for a client tool must be a result", async () => {
  for (const bad of [{ text: "x" }, { content: 5 }, { content: "x", isError: "yes" }, ["x"], 7]) {
    const { client, sent } = scripted([{ call_id: "k1", tool: "ide_open", kind: "tool_result", wait_id: "w1" }]);
    await assert.rejects(client.runRound({ ...input }, { onWait: () => bad, pollMs: 10 }), (e: unknown) => {
      assert.ok(e instanceof TypeError, String(e));
      assert.match(e.message, /client tool call k1 \(ide_open\): return \{content, isError\}/);
      return true;
    });
    assert.deepEqual(sent, []);
  }
});

test("tools asks for the provider and the format", async () => {
  const seen: string[] = [];
  const f: typeof fetch = async (input) => {
    const url = new URL(String(input));
    seen.push(url.pathname + url.search);
    const format = url.searchParams.get("format") ?? "openai";
    return new Response(JSON.stringify({ provider: url.searchParams.get("provider"), format, tools: [], deferred: [] }));
  };
  const c = new Client("http://127.0.0.1:9", "t", { fetch: f });
  assert.equal((await c.tools({ provider: "claude-code" })).format, "openai");
  assert.equal((await c.tools({ provider: "openai", format: "responses" })).format, "responses");
  await c.tools({ provider: "openai", worker: true });
  assert.deepEqual(seen, ["/api/v1/tools?provider=claude-code", "/api/v1/tools?provider=openai&format=responses", "/api/v1/tools?provider=openai&worker=true"]);
  await assert.rejects(c.tools({ provider: "" }), TypeError);
  await assert.rejects(c.tools(undefined as never), TypeError);
});

test("a client tool's call is answered by onWait", { skip }, async () => {
  // Y5: the call reaches onWait as kind tool_result with a wait_id; the
  // result onWait returns becomes the call's result, sent with an agent
  // token; a result for another wait is 409 stale_wait, one for a call
  // that no longer waits 404 not_waiting.
  const { agent, approver, session } = live("client-tool");
  const seen: PendingCall[] = [];
  const wid = roundWorkflowId(session, "r1", 1);
  const inp = roundInput(session, 1, [
    call("k1", "ide_open", { file: "a.go" }),
    call("k2", "ide_open", { file: "b.go" }),
    call("c1", "calculate", { expression: "6*7" }),
  ]);
  inp.client_tools = [{
    type: "function",
    function: {
      name: "ide_open",
      description: "Opens a file in the editor",
      parameters: { type: "object", properties: { file: { type: "string" } }, required: ["file"] },
    },
  }];
  const res = await agent.runRound(inp, {
    onWait: async (p) => {
      seen.push(p);
      if (p.call_id === "k1") {
        await rejects(agent.submitToolResult(wid, "k1", "too early", { waitId: "0".repeat(64) }), 409, "stale_wait");
        return { content: "opened a.go at line 3" };
      }
      return { content: "b.go is not open", isError: true };
    },
    timeoutMs: 120_000,
  });
  assert.deepEqual(seen.map((p) => [p.call_id, p.kind]).sort(), [["k1", "tool_result"], ["k2", "tool_result"]]);
  for (const p of seen) assert.equal(p.wait_id?.length, 64, JSON.stringify(p));
  const r = Object.fromEntries((res.results ?? []).map((x) => [x.call_id, x]));
  assert.equal(r.k1.status, "ok");
  assert.equal(r.k1.content, "opened a.go at line 3");
  assert.equal(r.k2.status, "error");
  assert.match(r.k2.content ?? "", /b\.go is not open/);
  assert.equal(r.c1.status, "ok");
  await rejects(approver.submitToolResult(wid, "k1", "again"), 404, "not_waiting");
});

test("tools gives the provider's tools array in each format", { skip }, async () => {
  const { agent } = live("tools");
  const ts = await agent.tools({ provider: "claude-code" });
  assert.deepEqual([ts.provider, ts.format], ["claude-code", "openai"]);
  assert.equal(ts.tools[0].type, "function");
  assert.ok("function" in ts.tools[0]);
  const an = await agent.tools({ provider: "claude-code", format: "anthropic" });
  assert.ok("input_schema" in an.tools[0]);
  assert.deepEqual(an.deferred, ts.deferred);
  const rs = await agent.tools({ provider: "openai", format: "responses" });
  assert.equal(rs.tools[0].strict, false);
  await rejects(agent.tools({ provider: "openai", format: "xml" as never }), 400, "bad_request");
});
