// The official MCP TypeScript SDK's client against `kevo mcp --fake-gpu` (run by
// sdk_client_test.sh, which sets NODE_PATH, KEVO_BIN and SCRATCH). Each case asserts on what the
// server answered and on what the run database recorded, never on a process's exit status alone.
'use strict';
const assert = require('node:assert/strict');
const { spawn, execFileSync } = require('node:child_process');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const kevo = process.env.KEVO_BIN;
const scratch = process.env.SCRATCH;
const kernel = (marker) =>
  `#include <kevo/kernel.h>\n// fake: ${marker}\nKEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }\n`;

function show(db, run) {
  return JSON.parse(execFileSync(kevo, ['show', String(run), '--db', db, '--json'], { encoding: 'utf8' }));
}
function text(result) { return result.content.map((c) => c.text).join('\n'); }

async function stdioClient(db, extra = []) {
  const transport = new StdioClientTransport({
    command: kevo, args: ['mcp', 'softmax', '--fake-gpu', '--db', db, ...extra], stderr: 'pipe',
  });
  const client = new Client({ name: 'sdk-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function everyToolOverStdio() {
  const db = path.join(scratch, 'stdio.db');
  const { client } = await stdioClient(db);
  assert.equal(client.getServerVersion().name, 'kevo');
  assert.match(client.getInstructions(), /submit/);
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.deepEqual(names, ['task', 'compile', 'evaluate', 'profile', 'history', 'submit']);
  const task = await client.callTool({ name: 'task', arguments: {} });
  assert.match(text(task), /Candidate ABI/);
  assert.equal(task.structuredContent.name, 'softmax');
  const compiled = await client.callTool({ name: 'compile', arguments: { source: kernel('compile_error kernel.cu(3): error: oops') } });
  assert.equal(compiled.structuredContent.ok, false);
  const good = await client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=1.0'), name: 'good', idea: 'fewer passes' } });
  assert.equal(good.isError, false);
  assert.equal(good.structuredContent.outcome, 'pass');
  assert.match(text(good), /speedup 2\.000x/);
  const bad = await client.callTool({ name: 'evaluate', arguments: { source: kernel('incorrect out[3] = 7 (expected 1)') } });
  assert.equal(bad.structuredContent.outcome, 'incorrect');
  assert.match(bad.structuredContent.feedback, /First mismatch/);
  const prof = await client.callTool({ name: 'profile', arguments: { candidate: good.structuredContent.candidate } });
  assert.ok(prof.structuredContent.profile, JSON.stringify(prof));
  const sub = await client.callTool({ name: 'submit', arguments: { candidate: good.structuredContent.candidate } });
  assert.equal(sub.structuredContent.winner, true, JSON.stringify(sub));
  const hist = await client.callTool({ name: 'history', arguments: {} });
  assert.equal(hist.structuredContent.attempts.length, 3);
  const abi = await client.readResource({ uri: 'kevo://abi' });
  assert.match(abi.contents[0].text, /kevo_forward/);
  await client.close();
  const r = show(db, 1);
  assert.equal(r.strategy, 'mcp');
  assert.equal(r.candidates.length, 3);
  assert.equal(r.final.winner, good.structuredContent.candidate);
  assert.equal(r.candidates[0].model, 'sdk-test 1.0.0');
  assert.equal(r.status, 'finished');
}

async function badInputsOverStdio() {
  const db = path.join(scratch, 'bad.db');
  const { client } = await stdioClient(db, ['--max-evals', '2']);
  const wrongType = await client.callTool({ name: 'evaluate', arguments: { source: 5 } });
  assert.equal(wrongType.isError, true);
  assert.match(text(wrongType), /argument 'source' must be a string/);
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /unknown tool/);
  const huge = await client.callTool({ name: 'evaluate', arguments: { source: 'x'.repeat(50 << 20) } });
  assert.equal(huge.isError, true);
  assert.match(text(huge), /the limit is 262144 bytes/);
  const neither = await client.callTool({ name: 'submit', arguments: {} });
  assert.equal(neither.isError, true);
  await client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=1.0') } });
  await client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=1.0') } });
  const over = await client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=1.0') } });
  assert.equal(over.isError, true);
  assert.match(text(over), /budget: evaluations spent \(2 of 2\)/);
  // A flood of calls: each is answered (the refused ones as budget errors), none is lost.
  const flood = await Promise.allSettled(Array.from({ length: 100 }, () => client.callTool({ name: 'history', arguments: {} })));
  for (const f of flood)
    if (f.status === 'rejected') assert.match(String(f.reason), /in flight already/);
  assert.ok(flood.some((f) => f.status === 'fulfilled'));
  await client.close();
  const r = show(db, 1);
  assert.equal(r.candidates.length, 2, 'refused calls record nothing');
  assert.equal(r.best_candidate, r.candidates[0].id);
  assert.deepEqual(r.final, {}, 'nothing submitted: no winner');
}

async function clientLeavesMidEvaluation() {
  const db = path.join(scratch, 'gone.db');
  const { client } = await stdioClient(db);
  const pending = client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=1.0 sleep_ms=1200') } }).catch(() => null);
  await new Promise((r) => setTimeout(r, 300));
  await client.close();  // stdin closed; the SDK sends SIGTERM if the server is still there 2 s later
  await pending;
  const r = show(db, 1);
  assert.equal(r.candidates.length, 1, 'the evaluation in flight was finished and recorded');
  assert.equal(r.stop_reason, 'agent_client_gone');
  assert.equal(r.status, 'finished');
}

async function clientGivesUpOnALongEvaluation() {
  // The SDK closes stdin, then sends SIGTERM after 2 s: the run is recorded at once, the call in
  // flight recorded as abandoned.
  const db = path.join(scratch, 'term.db');
  const { client } = await stdioClient(db);
  const pending = client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=1.0 sleep_ms=5000') } }).catch(() => null);
  await new Promise((r) => setTimeout(r, 300));
  await client.close();
  await pending;
  const r = show(db, 1);
  assert.equal(r.status, 'interrupted');
  assert.equal(r.stop_reason, 'agent_shutdown');
  assert.match(r.note, /1 call\(s\) in flight abandoned/);
  assert.equal(r.candidates.length, 0);
}

async function streamableHttp() {
  const db = path.join(scratch, 'http.db');
  const server = spawn(kevo, ['mcp', 'softmax', '--fake-gpu', '--db', db, '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise((resolve, reject) => {
    let err = '';
    server.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`kevo mcp --http exited ${code}: ${err}`)));
  });
  const sessions = [];
  for (const name of ['first', 'second']) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name, version: '2.0.0' });
    await client.connect(transport);
    assert.ok(transport.sessionId);
    const ev = await client.callTool({ name: 'evaluate', arguments: { source: kernel('pass time_ms=0.5') } });
    assert.equal(ev.structuredContent.outcome, 'pass');
    const sub = await client.callTool({ name: 'submit', arguments: { candidate: ev.structuredContent.candidate } });
    assert.equal(sub.structuredContent.winner, true);
    sessions.push({ client, transport });
  }
  for (const s of sessions) {
    await s.transport.terminateSession();
    await s.client.close();
  }
  const exited = new Promise((r) => server.on('exit', r));
  server.kill('SIGINT');
  await exited;
  assert.throws(() => show(db, 3), 'one run per HTTP session, two sessions');
  for (const id of [1, 2]) {
    const r = show(db, id);
    assert.equal(r.candidates.length, 1);
    assert.equal(r.final.winner, r.candidates[0].id);
    assert.equal(r.stop_reason, 'agent_client_gone');
  }
}

(async () => {
  const cases = { everyToolOverStdio, badInputsOverStdio, clientLeavesMidEvaluation, clientGivesUpOnALongEvaluation,
                  streamableHttp };
  let failed = 0;
  for (const [name, fn] of Object.entries(cases)) {
    const t0 = Date.now();
    try {
      await fn();
      console.log(`ok - ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.log(`not ok - ${name}: ${e.stack || e}`);
    }
  }
  process.exit(failed ? 1 : 0);
})();
