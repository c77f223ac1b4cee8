// Times MCP `bash` calls of `true` through `cshell serve`, as an agent host
// makes them (the npm TypeScript SDK's client, request to answer), against
// bubblewrap's and srt's cold `true`, interleaved round-robin; prints one
// line a peer: label, median, min, max (ms), runs failed.
//   warm  a server that keeps a sandbox made ahead (the default); each call
//         comes 300 ms after the one before it ended (untimed), as an
//         agent's do, so that the next warm sandbox is ready
//   cold  a server with sandbox.warm false (COLD_CONFIG): every call makes
//         its sandbox
//
// usage: node serve_calls.mjs ROUNDS SDK_DIR CSHELL STATE BWRAP SRT COLD_CONFIG
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";

const [rounds, sdk, cshell, state, bwrap, srt, coldConfig] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);

const serve = async (...flags) => {
  const c = new Client({ name: "cshell-bench", version: "1" });
  await c.connect(new StdioClientTransport({ command: cshell, args: [...flags, "serve"], env: process.env, stderr: "inherit" }));
  return c;
};
const warm = await serve("--state-dir", `${state}/warm`);
const cold = await serve("--state-dir", `${state}/cold`, "--config", coldConfig);
const call = async (client) => {
  const r = await client.callTool({ name: "bash", arguments: { command: "true" } });
  const text = (r.content ?? []).map((c) => c.text ?? "").join("");
  return !r.isError && text.endsWith("exit code 0");
};
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const bwrapArgs = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "/bin/true"];
const peers = {
  warm: async () => call(warm),
  cold: async () => call(cold),
  bwrap: async () => spawnSync(bwrap, bwrapArgs, { stdio: "ignore" }).status === 0,
  srt: async () => spawnSync(srt, ["true"], { stdio: "ignore" }).status === 0,
};
const labels = Object.keys(peers);
const times = Object.fromEntries(labels.map((l) => [l, []]));
const failed = Object.fromEntries(labels.map((l) => [l, 0]));
const n = Number(rounds);
for (let round = -3; round < n; round++) { // three untimed rounds first
  for (let i = 0; i < labels.length; i++) {
    const label = labels[(i + Math.max(round, 0)) % labels.length]; // who goes first moves on
    if (label === "warm") await pause(300);
    const t0 = performance.now();
    const ok = await peers[label]();
    const ms = performance.now() - t0;
    if (round < 0) continue;
    times[label].push(ms);
    if (!ok) failed[label]++;
  }
}
await warm.close();
await cold.close();
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
for (const l of labels) {
  const a = times[l];
  console.log([l, median(a).toFixed(2), Math.min(...a).toFixed(2), Math.max(...a).toFixed(2), failed[l]].join("\t"));
}
