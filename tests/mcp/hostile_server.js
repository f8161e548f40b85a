#!/usr/bin/env node
// A misbehaving MCP server for agentwire's tests: node hostile_server.js MODE
//
// Modes change the handshake: normal, noinit (never answers initialize),
// badversion (answers with a version nobody speaks), oldversion (2024-11-05),
// paged (tools/list two tools a page), exit (exits at once, status 3),
// stubborn (ignores the end of its stdin and SIGTERM),
// garbage (writes lines that are not JSON-RPC before answering).
// Tools misbehave when called: see TOOLS below. HOSTILE_LOG names a file
// where the server appends what it was told (cancellations, answers to its
// own requests), so a test can check what the client sent.
'use strict';
const fs = require('fs');
const { spawn } = require('child_process');

const mode = process.argv[2] || 'normal';
const logFile = process.env.HOSTILE_LOG;
const note = (s) => { if (logFile) fs.appendFileSync(logFile, s + '\n'); };

if (mode === 'exit') {
    process.stderr.write('hostile: exiting at once as asked\n');
    process.exit(3);
}

const send = (msg) => process.stdout.write(JSON.stringify(msg) + '\n');
const textResult = (id, text) => send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

let tools = ['echo', 'progress', 'fail', 'rpcerror', 'image', 'resource', 'structured', 'crash', 'hang', 'huge',
    'garbage', 'change', 'ask', 'log', 'pid', 'grandchild'].map((name) => ({
    name,
    description: 'hostile ' + name,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
}));
tools.push({ name: 'dotted.name/x', description: 'a name with characters model APIs refuse', inputSchema: { type: 'object' } });

const pending = new Map(); // our requests to the client, by id
let nextOwnId = 1;
const ask = (method, params) => new Promise((resolve) => {
    const id = 'srv-' + nextOwnId++;
    pending.set(id, resolve);
    send({ jsonrpc: '2.0', id, method, params });
});

const TOOLS = {
    echo: (id, args) => textResult(id, 'echo: ' + (args.text || '')),
    progress: async (id, args, meta) => {
        for (let i = 1; i <= 3; i++) {
            send({ jsonrpc: '2.0', method: 'notifications/progress',
                params: { progressToken: meta.progressToken, progress: i, total: 3, message: 'step ' + i } });
            await new Promise((r) => setTimeout(r, 5));
        }
        textResult(id, 'done after 3 steps');
    },
    fail: (id) => send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'it failed on purpose' }], isError: true } }),
    rpcerror: (id) => send({ jsonrpc: '2.0', id, error: { code: -32602, message: 'bad arguments on purpose' } }),
    image: (id) => send({ jsonrpc: '2.0', id, result: { content: [
        { type: 'text', text: 'an image follows' },
        { type: 'image', data: Buffer.alloc(34 * 1024, 7).toString('base64'), mimeType: 'image/png' },
        { type: 'audio', data: Buffer.alloc(3000, 1).toString('base64'), mimeType: 'audio/wav' }] } }),
    resource: (id) => send({ jsonrpc: '2.0', id, result: { content: [
        { type: 'resource', resource: { uri: 'test://doc/1', mimeType: 'text/plain', text: 'x'.repeat(120) } },
        { type: 'resource_link', uri: 'file:///tmp/report.pdf', name: 'report', mimeType: 'application/pdf', size: 2048 },
        { type: 'future_kind', data: 'x' }, { type: 'Q'.repeat(500) }] } }),
    structured: (id) => send({ jsonrpc: '2.0', id, result: { content: [], structuredContent: { temperature: 21.5, unit: 'C' } } }),
    crash: () => process.kill(process.pid, 'SIGKILL'),
    hang: () => {},
    huge: (id) => {
        // 100 MB of text in one line, the id last as the TypeScript SDK writes it
        const chunk = 'x'.repeat(1 << 20);
        process.stdout.write('{"result":{"content":[{"type":"text","text":"');
        for (let i = 0; i < 100; i++) process.stdout.write(chunk);
        process.stdout.write('"}]},"jsonrpc":"2.0","id":' + JSON.stringify(id) + '}\n');
    },
    garbage: (id) => {
        process.stdout.write('this line is not JSON at all\n');
        process.stdout.write('{"jsonrpc":"2.0","id":' + JSON.stringify(id) + ',"result":{"content":[{"type":"te\n');
    },
    change: (id) => {
        tools = tools.filter((t) => t.name !== 'echo');
        tools.push({ name: 'added', description: 'a tool added by change', inputSchema: { type: 'object' } });
        send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
        textResult(id, 'changed');
    },
    ask: async (id) => {
        const answers = await Promise.all([ask('ping'), ask('sampling/createMessage', { messages: [], maxTokens: 5 }),
            ask('roots/list'), ask('elicitation/create', { message: 'name?', requestedSchema: { type: 'object' } })]);
        textResult(id, answers.map((a) => (a.error ? 'error ' + a.error.code : 'ok ' + JSON.stringify(a.result))).join('; '));
    },
    log: (id) => {
        send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: 'hostile', data: 'a warning from the server' } });
        process.stderr.write('a line on stderr that the model must not see\n');
        textResult(id, 'logged');
    },
    pid: (id) => textResult(id, String(process.pid)),
    grandchild: (id) => {
        const child = spawn('sleep', ['300'], { stdio: 'ignore' });
        textResult(id, String(child.pid));
    },
};

function onRequest(msg) {
    const { id, method, params } = msg;
    if (method === 'initialize') {
        if (mode === 'noinit') return;
        const version = mode === 'badversion' ? '1999-01-01' : mode === 'oldversion' ? '2024-11-05' : params.protocolVersion;
        note('initialize ' + params.protocolVersion + ' ' + JSON.stringify(params.clientInfo));
        send({ jsonrpc: '2.0', id, result: { protocolVersion: version, capabilities: { tools: { listChanged: true }, logging: {} },
            serverInfo: { name: 'hostile', version: '1.0.0' } } });
        return;
    }
    if (method === 'tools/list') {
        if (mode !== 'paged') return send({ jsonrpc: '2.0', id, result: { tools } });
        const start = params && params.cursor ? Number(params.cursor) : 0;
        const page = { tools: tools.slice(start, start + 2) };
        if (start + 2 < tools.length) page.nextCursor = String(start + 2);
        note('tools/list cursor ' + (params && params.cursor ? params.cursor : '-'));
        return send({ jsonrpc: '2.0', id, result: page });
    }
    if (method === 'tools/call') {
        const fn = TOOLS[params.name];
        if (!fn) return send({ jsonrpc: '2.0', id, error: { code: -32602, message: 'Unknown tool: ' + params.name } });
        return fn(id, params.arguments || {}, params._meta || {});
    }
    if (method === 'ping') return send({ jsonrpc: '2.0', id, result: {} });
    send({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
}

function onMessage(msg) {
    if (msg.method && msg.id !== undefined) return onRequest(msg);
    if (msg.method) {
        if (msg.method === 'notifications/cancelled') note('cancelled ' + msg.params.requestId);
        if (msg.method === 'notifications/initialized') note('initialized');
        return;
    }
    const resolve = pending.get(msg.id);
    if (resolve) {
        pending.delete(msg.id);
        note('answer ' + JSON.stringify(msg));
        resolve(msg);
    }
}

if (mode === 'stubborn') process.on('SIGTERM', () => note('SIGTERM ignored'));
if (mode === 'garbage') process.stdout.write('garbage before anything\n\x00\xff not even text\n');

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.trim()) continue;
        let msg;
        try { msg = JSON.parse(line); } catch (e) { note('unparseable ' + line); continue; }
        onMessage(msg);
    }
});
process.stdin.on('end', () => {
    note('stdin closed');
    if (mode === 'stubborn') setInterval(() => {}, 1000);
    else process.exit(0);
});
