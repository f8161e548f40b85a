// node runtime_peer.js BASE_URL MODEL TOOLS_JSON SYSTEM TASK MAX_TURNS — the
// runtime benchmark's peer (bench/run_runtime.sh): the agent loop a user
// would write on the official OpenAI SDK (npm `openai`) instead of running
// agentwire, doing the same job the same way:
//   - Chat Completions with native tools, streamed (with usage, as
//     agentwire asks for it), tool-call fragments joined by index;
//   - the tools are agentwire's command tools (the same TOOLS_JSON as
//     `agentwire run --tools`): each call a child process in a process group
//     of its own, the arguments (parsed, then written as JSON) on stdin, the
//     result from stdout, cut at 100,000 bytes, a non-zero exit a failed
//     call; the calls of a turn run at once;
//   - the whole history is sent with each request, as the API requires;
//   - a reply without tool calls is the answer, printed on stdout.
// Its CPU time and memory are measured from outside (bench/runtime_launch.c
// and the stub's request log), so it measures nothing itself.
'use strict';
const fs = require('fs');
const { spawn } = require('child_process');
const OpenAI = require('openai');

const [baseURL, model, toolsFile, system, task, maxTurnsArg] = process.argv.slice(2);
const maxTurns = Number(maxTurnsArg);
const MAX_TOOL_OUTPUT = 100000;
const TOOL_TIMEOUT_MS = 120000;

const commandTools = new Map();
for (const t of JSON.parse(fs.readFileSync(toolsFile, 'utf8'))) commandTools.set(t.name, t);
const toolDefs = [...commandTools.values()].map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.input_schema },
}));

const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY });

// One call of a command tool: resolves to the text the model gets back.
function runTool(call) {
    const tool = commandTools.get(call.function.name);
    if (!tool) return Promise.resolve(`(tool failed: no tool named ${call.function.name})`);
    let input;
    try {
        input = JSON.stringify(JSON.parse(call.function.arguments || '{}'));
    } catch (e) {
        return Promise.resolve(`(tool failed: the arguments are not JSON: ${e.message})`);
    }
    return new Promise((resolve) => {
        const child = spawn(tool.command[0], tool.command.slice(1), {
            cwd: tool.cwd,
            detached: true, // a process group of its own, killed whole on timeout
            stdio: ['pipe', 'pipe', 'pipe'],
        });
        const out = [];
        let outBytes = 0;
        let errTail = '';
        const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), tool.timeout_ms || TOOL_TIMEOUT_MS);
        child.stdout.on('data', (b) => {
            if (outBytes < MAX_TOOL_OUTPUT) out.push(b);
            outBytes += b.length;
        });
        child.stderr.on('data', (b) => (errTail = (errTail + b.toString()).slice(-2000)));
        child.stdin.on('error', () => {}); // a tool that does not read its input
        child.on('error', (e) => {
            clearTimeout(timer);
            resolve(`(tool failed: ${e.message})`);
        });
        child.on('close', (code, signal) => {
            clearTimeout(timer);
            let text = Buffer.concat(out).toString('utf8');
            if (outBytes > MAX_TOOL_OUTPUT)
                text = text.slice(0, MAX_TOOL_OUTPUT) + `\n(output cut: ${outBytes - MAX_TOOL_OUTPUT} more bytes)`;
            if (code === 0) resolve(text);
            else resolve(`(tool failed: ${signal ? 'killed by ' + signal : 'exit status ' + code}) ${errTail}`);
        });
        child.stdin.end(input);
    });
}

// One model request, streamed: the assistant message it makes.
async function ask(messages) {
    const stream = await client.chat.completions.create({
        model,
        messages,
        tools: toolDefs,
        stream: true,
        stream_options: { include_usage: true },
    });
    let content = '';
    const calls = [];
    for await (const chunk of stream) {
        const delta = chunk.choices[0] && chunk.choices[0].delta;
        if (!delta) continue; // the usage chunk
        if (delta.content) content += delta.content;
        for (const d of delta.tool_calls || []) {
            const c = (calls[d.index] ||= { id: '', type: 'function', function: { name: '', arguments: '' } });
            if (d.id) c.id = d.id;
            if (d.function && d.function.name) c.function.name += d.function.name;
            if (d.function && d.function.arguments) c.function.arguments += d.function.arguments;
        }
    }
    const message = { role: 'assistant', content: content || null };
    if (calls.length) message.tool_calls = calls.filter(Boolean);
    return message;
}

async function main() {
    const messages = [
        { role: 'system', content: system },
        { role: 'user', content: task },
    ];
    for (let turn = 1; turn <= maxTurns; turn++) {
        const reply = await ask(messages);
        messages.push(reply);
        if (!reply.tool_calls) {
            process.stdout.write((reply.content || '') + '\n');
            return;
        }
        const results = await Promise.all(reply.tool_calls.map(runTool));
        reply.tool_calls.forEach((call, i) => messages.push({ role: 'tool', tool_call_id: call.id, content: results[i] }));
    }
    throw new Error(`no answer after ${maxTurns} turns`);
}

main().catch((e) => {
    console.error('runtime_peer: ' + e.message);
    process.exitCode = 1;
});
