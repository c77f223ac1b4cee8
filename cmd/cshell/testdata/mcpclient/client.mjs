// An MCP client for cshell's end-to-end tests, built on the npm
// TypeScript SDK's own client (@modelcontextprotocol/sdk): nothing here
// speaks the protocol by hand. It starts `cshell serve`, plays one
// scenario and prints what happened as JSON lines on stdout, for the Go
// test to judge.
//
// usage: node client.mjs SCENARIO CSHELL [ARG...]
//   CSHELL_STATE      the state dir to give cshell (--state-dir)
//   CSHELL_WORKDIR    the server's working directory
//   CSHELL_SERVE_ARGS more arguments of serve, space-separated (--session S)
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [scenario, cshell, ...rest] = process.argv.slice(2);
const say = (event, data = {}) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");
const text = (r) => (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");

// connect starts a server and connects a client of the SDK's to it.
async function connect() {
  const extra = (process.env.CSHELL_SERVE_ARGS ?? "").split(" ").filter((a) => a !== "");
  const transport = new StdioClientTransport({
    command: cshell,
    args: ["--state-dir", process.env.CSHELL_STATE, "serve", ...extra],
    cwd: process.env.CSHELL_WORKDIR,
    env: process.env, // as a host would; the SDK passes only a few variables otherwise
    stderr: "inherit",
  });
  const c = new Client({ name: "cshell-e2e-ts", version: "1" });
  await c.connect(transport);
  return c;
}
let client = await connect();
say("connected", { tasks: client.getServerCapabilities()?.tasks ?? null });

// fetchStatus GETs a URL from this machine: its status, or the error.
async function fetchStatus(url) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await r.text();
    return r.status;
  } catch (e) {
    return String(e?.cause?.code ?? e?.message ?? e);
  }
}

// stream plays callToolStream to its end; onCreated runs once the task is
// made. The SDK asks for a task only for a tool that tools/list marked.
async function stream(args, onCreated) {
  await client.listTools();
  for await (const m of client.experimental.tasks.callToolStream({ name: "bash", arguments: args })) {
    switch (m.type) {
      case "taskCreated":
        say("taskCreated", { task: m.task });
        if (onCreated) await onCreated(m.task);
        break;
      case "taskStatus":
        say("taskStatus", { status: m.task.status, statusMessage: m.task.statusMessage ?? null });
        break;
      case "result":
        say("result", { text: text(m.result), isError: m.result.isError ?? false, structured: m.result.structuredContent ?? null });
        break;
      case "error":
        say("error", { message: m.error.message });
        break;
    }
  }
}

try {
  switch (scenario) {
    case "tools": {
      // listTools caches the output schemas; callTool then validates each
      // structured answer against its schema, and throws if it does not fit.
      const { tools } = await client.listTools();
      say("tools", {
        tools: tools.map((t) => ({ name: t.name, title: t.title ?? null, annotations: t.annotations ?? null,
          execution: t.execution ?? null, outputSchema: t.outputSchema ?? null })),
      });
      const started = await client.callTool({ name: "bash", arguments: { command: rest[0], run_in_background: true } });
      say("started", { text: text(started) });
      await new Promise((r) => setTimeout(r, 500));
      const out = await client.callTool({ name: "bash_output", arguments: { bash_id: "1", wait_seconds: 2 } });
      say("bash_output", { structured: out.structuredContent ?? null, text: text(out) });
      const list = await client.callTool({ name: "list_shells", arguments: {} });
      say("list_shells", { structured: list.structuredContent ?? null });
      const bad = await client.callTool({ name: "bash_output", arguments: { bash_id: "99" } });
      say("bad", { isError: bad.isError ?? false, text: text(bad), structured: bad.structuredContent ?? null });
      break;
    }
    case "task": // ARG: the command, run in the background as a task
      await stream({ command: rest[0], run_in_background: true });
      break;
    case "foreground-task": // ARG: the command, in the foreground, as a task
      await stream({ command: rest[0] });
      break;
    case "task-kill": // kill_shell with the task's id
      await stream({ command: rest[0], run_in_background: true }, async (task) => {
        const r = await client.callTool({ name: "kill_shell", arguments: { shell_id: task.taskId, grace_seconds: 1 } });
        say("killed", { text: text(r), isError: r.isError ?? false });
      });
      break;
    case "task-cancel": // tasks/cancel
      await stream({ command: rest[0], run_in_background: true }, async (task) => {
        const r = await client.experimental.tasks.cancelTask(task.taskId);
        say("cancelled", { status: r.status });
      });
      break;
    case "note": { // no tasks: the end comes with the next tool result
      const started = await client.callTool({ name: "bash", arguments: { command: rest[0], run_in_background: true } });
      say("started", { text: text(started) });
      const deadline = Date.now() + 15000;
      let seen = "";
      while (Date.now() < deadline && !seen.includes("[cshell notice]")) {
        await new Promise((r) => setTimeout(r, 200));
        seen = text(await client.callTool({ name: "list_shells", arguments: {} }));
      }
      say("note", { text: seen });
      break;
    }
    case "progress": { // ARG: a foreground command; counts progress notifications
      const progress = [];
      const r = await client.callTool({ name: "bash", arguments: { command: rest[0] } }, undefined, {
        onprogress: (p) => progress.push(p),
        timeout: 60000,
      });
      say("progress", { text: text(r), progress });
      break;
    }
    case "reload": { // ARG: a dev server's command, its port: the host reloads its server meanwhile
      const [command, port] = rest;
      const url = `http://127.0.0.1:${port}/`;
      const started = await client.callTool({ name: "bash", arguments: { command, run_in_background: true, expose: [port], ready: true } });
      say("started", { text: text(started), isError: started.isError ?? false, structured: started.structuredContent ?? null });
      say("fetch", { when: "before", status: await fetchStatus(url) });
      const first = await client.callTool({ name: "bash_output", arguments: { bash_id: "1" } });
      say("output", { when: "before", text: text(first) });
      await client.close(); // the host reloads: its server's stdin closes, and the server ends
      await new Promise((r) => setTimeout(r, 1500));
      say("fetch", { when: "between", status: await fetchStatus(url) });
      const ps = execFileSync(cshell, ["--state-dir", process.env.CSHELL_STATE, "ps", "--json"], { encoding: "utf8" });
      say("ps", { when: "between", shells: JSON.parse(ps) });
      client = await connect();
      const list = await client.callTool({ name: "list_shells", arguments: {} });
      say("list", { text: text(list), structured: list.structuredContent ?? null });
      say("fetch", { when: "after", status: await fetchStatus(url) });
      const next = await client.callTool({ name: "bash_output", arguments: { bash_id: "1", wait_seconds: 2 } });
      say("output", { when: "after", text: text(next) });
      try {
        const task = await client.experimental.tasks.getTask("shell-1");
        say("task", { status: task.status, statusMessage: task.statusMessage ?? null });
      } catch (e) {
        say("task", { error: String(e?.message ?? e) });
      }
      const killed = await client.callTool({ name: "kill_shell", arguments: { shell_id: "1", grace_seconds: 2 } });
      say("killed", { text: text(killed), isError: killed.isError ?? false });
      say("fetch", { when: "killed", status: await fetchStatus(url) });
      break;
    }
    case "texts": { // what a model reads: the directory kept, seconds, & jobs, argument errors, no escapes
      const call = async (args) => {
        const r = await client.callTool({ name: "bash", arguments: args });
        return { text: text(r), isError: r.isError ?? false };
      };
      say("cd", await call({ command: "mkdir -p sub && cd sub && echo moved" }));
      say("pwd", await call({ command: "pwd" }));
      say("millis", await call({ command: "true", timeout: 30000 }));
      say("job", await call({ command: "sleep 30 &" }));
      say("missing", await call({}));
      say("colour", await call({ command: "printf '\\033[31mred\\033[0m \\033]0;title\\007plain\\n'" }));
      break;
    }
    default:
      say("error", { message: `no scenario ${scenario}` });
  }
} catch (e) {
  say("error", { message: String(e?.message ?? e) });
} finally {
  await client.close();
}
