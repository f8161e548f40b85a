// bench/runtime_job.js — the runtime benchmark's job and its arithmetic
// (bench/run_runtime.sh calls it; no npm package needed):
//
//   node runtime_job.js script TURNS CALLS native|xml NONCE
//       the stub's script (stub_llm --script) on stdout: TURNS replies of
//       CALLS calls to read_file each (native tool_calls, or the xml
//       transport's tags of session NONCE in the slots agentwire opens:
//       turn t's are (t-1)*10+1 ..), then the final answer (native: text
//       alone; xml: the final-report tag). Every call has its own id and
//       path. Each reply is one write (chunks 0), so both runtimes read
//       the same bytes the same way.
//   node runtime_job.js measure NAME LAUNCH RUSAGE STUB_LOG
//       one run as a JSON line: NAME, the runtime's own CPU (user, system)
//       and peak RSS (RUSAGE, bench/preload/rusage_at_exit.c), the time
//       from its start (LAUNCH, bench/runtime_launch.c) to the stub's
//       first request, the wall time, and the CPU it spent on each turn:
//       the growth of its CPU time between turn t's request and turn
//       t+1's (the stub's client_cpu_ns, read while the runtime waits for
//       the reply), i.e. reading reply t, running its calls, building
//       request t+1.
//   node runtime_job.js callgrind DIR
//       agentwire's own work a turn, deterministic: DIR holds the dumps of
//       a run under `valgrind --tool=callgrind --dump-before=aw_http_start`
//       (one dump a model request), so dump t+1 counts the user-space
//       instructions from turn t's request to turn t+1's; of them, those of
//       read_cb (the one copy of the request body into curl's send buffer,
//       which grows with the history the API wants in every request) are
//       told apart. A JSON line {"turn_ir": [...], "body_copy_ir": [...]}.
//   node runtime_job.js table RESULTS.jsonl LONG_RESULTS.jsonl [CALLGRIND.json]
//       the BENCHMARKS.md rows: best of the rounds for each runtime.
'use strict';
const fs = require('fs');

const [command, ...args] = process.argv.slice(2);

function script(turns, calls, mode, nonce) {
    const lines = [];
    const usage = { input_tokens: 1000, output_tokens: 60 };
    for (let t = 1; t <= turns; t++) {
        const line = { endpoint: '/v1/chat/completions', usage, chunks: 0, piece: 64 };
        const paths = Array.from({ length: calls }, (_, k) => `src/file_${t}_${k + 1}.c`);
        if (mode === 'native') {
            line.tool_calls = paths.map((path, k) => ({ id: `call_${t}_${k + 1}`, name: 'read_file', arguments: { path } }));
        } else {
            const tag = (slot, path) => {
                const name = `ai-agent-${nonce}-${String(slot).padStart(4, '0')}`;
                return `<${name} tool="read_file">${JSON.stringify({ path })}</${name}>`;
            };
            line.text = 'Reading the next files.\n' + paths.map((p, k) => tag((t - 1) * 10 + k + 1, p)).join('\n');
        }
        lines.push(line);
    }
    const answer = `Read ${turns * calls} files in ${turns} turns.`;
    const final =
        mode === 'native'
            ? answer
            : `<ai-agent-${nonce}-FINAL tool="agent__final_report" status="success" format="markdown">${answer}</ai-agent-${nonce}-FINAL>`;
    lines.push({ endpoint: '/v1/chat/completions', text: final, usage, chunks: 0, piece: 64 });
    return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

// The medians of the first ten, the ten up to the middle and the last ten.
function windows(xs) {
    const n = xs.length, mid = Math.floor(n / 2);
    return [median(xs.slice(0, 10)), median(xs.slice(mid - 10, mid)), median(xs.slice(n - 10))];
}

const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

function measure(name, launchFile, rusageFile, logFile) {
    const launch = JSON.parse(fs.readFileSync(launchFile, 'utf8'));
    const ru = JSON.parse(fs.readFileSync(rusageFile, 'utf8'));
    if (launch.exit !== 0) throw new Error(`${name}: the runtime exited with ${launch.exit}`);
    if (ru.pid !== launch.pid) throw new Error(`${name}: the rusage report is not the runtime's`);
    const posts = fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map(JSON.parse)
        .filter((r) => r.method === 'POST');
    if (posts.some((r) => r.line === 0)) throw new Error(`${name}: a request was not answered by the script`);
    const cpu = posts.map((r) => r.client_cpu_ns);
    const turnCpuUs = [];
    for (let i = 1; i < cpu.length; i++) turnCpuUs.push((cpu[i] - cpu[i - 1]) / 1000);
    return {
        name,
        cpu_us: ru.user_us + ru.sys_us,
        user_us: ru.user_us,
        sys_us: ru.sys_us,
        maxrss_kb: ru.maxrss_kb,
        first_request_us: posts[0].arrived_us - launch.start_us,
        first_request_cpu_us: posts[0].client_cpu_ns / 1000,
        wall_us: launch.end_us - launch.start_us,
        requests: posts.length,
        first_request_bytes: posts[0].body.length,
        last_request_bytes: posts[posts.length - 1].body.length,
        turn_cpu_us: turnCpuUs,
    };
}

// One callgrind dump: its total instructions, and those spent inside the
// function named `inside` (its inclusive cost, summed over its callers'
// "calls=" records; the name is given once, then its number).
function callgrindDump(file, inside) {
    const names = new Map();
    let total = 0, within = 0, callsInside = false, costLineNext = false;
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        if (costLineNext) {
            const f = line.trim().split(/\s+/);
            within += Number(f[f.length - 1]);
            costLineNext = false;
            continue;
        }
        const fn = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
        if (fn) {
            if (fn[2] !== undefined) names.set(fn[1], fn[2]);
            if (line.startsWith('cfn=')) callsInside = names.get(fn[1]) === inside;
        } else if (line.startsWith('calls=')) {
            costLineNext = callsInside;
        } else {
            const t = /^totals:\s+(\d+)/.exec(line);
            if (t) total = Number(t[1]);
        }
    }
    return { total, within };
}

function callgrind(dir) {
    // cg.PID.1 is the start, up to the first request; cg.PID.N+1 turn N
    const dumps = fs.readdirSync(dir).filter((f) => /^cg\.\d+\.\d+$/.test(f))
        .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).slice(1)
        .map((f) => callgrindDump(`${dir}/${f}`, 'read_cb'));
    return { turn_ir: dumps.map((d) => d.total - d.within), body_copy_ir: dumps.map((d) => d.within) };
}

const RUNTIMES = [
    ['agentwire-native', 'agentwire, native tools (`openai:` provider)'],
    ['agentwire-xml', 'agentwire, xml transport (`openai:` provider)'],
    ['agentwire-native-store', 'agentwire, native, with its default SQLite session store'],
    ['openai-sdk', 'Node.js loop on the `openai` SDK'],
    ['curl-floor', 'for reference: a C program that only starts with libcurl and POSTs one request (`bench/first_request_floor.c`)'],
];

function table(resultsFile, longFile, callgrindFile) {
    const read = (f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map(JSON.parse);
    const runs = read(resultsFile);
    const best = {};
    for (const r of runs) {
        const keys = ['cpu_us', 'maxrss_kb', 'first_request_us', 'first_request_cpu_us', 'wall_us'];
        const b = (best[r.name] ||= Object.fromEntries(keys.map((k) => [k, Infinity])));
        for (const k of keys)
            if (r[k] < b[k]) b[k] = r[k];
        if (r.cpu_us <= b.cpu_us) Object.assign(b, { user_us: r.user_us, sys_us: r.sys_us });
    }
    const peer = best['openai-sdk'];
    const ms = (us) => (us / 1000).toFixed(us < 10000 ? 2 : 1);
    const mb = (kb) => (kb / 1024).toFixed(1);
    const times = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1)) + '×';
    const out = [];
    out.push('| runtime | CPU time of its own process (user + sys) | peak RSS | time to first request (its CPU time by then) | wall time | CPU vs the SDK loop | memory vs the SDK loop |');
    out.push('|---|---|---|---|---|---|---|');
    for (const [key, label] of RUNTIMES) {
        const b = best[key];
        if (!b) continue;
        const vs = key === 'openai-sdk' ? ['1×', '1×'] : key === 'curl-floor' ? ['—', '—']
            : [times(peer.cpu_us / b.cpu_us) + ' less', times(peer.maxrss_kb / b.maxrss_kb) + ' less'];
        out.push(`| ${label} | ${ms(b.cpu_us)} ms (${ms(b.user_us)} + ${ms(b.sys_us)}) | ${mb(b.maxrss_kb)} MB | ${ms(b.first_request_us)} ms (${ms(b.first_request_cpu_us)} ms) | ${ms(b.wall_us)} ms | ${vs[0]} | ${vs[1]} |`);
    }
    const aw = best['agentwire-native'];
    const goals = [
        `CPU ≥ 10× less: ${times(peer.cpu_us / aw.cpu_us)} (${peer.cpu_us / aw.cpu_us >= 10 ? 'met' : 'missed'})`,
        `memory ≥ 5× less: ${times(peer.maxrss_kb / aw.maxrss_kb)} (${peer.maxrss_kb / aw.maxrss_kb >= 5 ? 'met' : 'missed'})`,
        `first request within 5 ms: ${ms(aw.first_request_us)} ms (${aw.first_request_us <= 5000 ? 'met' : 'missed'})`,
    ];
    out.push('');
    out.push('Goals (agentwire native against the SDK loop): ' + goals.join('; ') + '.');
    if (longFile && fs.existsSync(longFile)) {
        out.push('');
        const longRuns = read(longFile);
        const turns = longRuns.length ? longRuns[0].turn_cpu_us.length : 0;
        const mid = Math.floor(turns / 2);
        out.push(`| runtime, ${turns}-turn run: CPU a turn (median of 10) | turns 1–10 | turns ${mid - 9}–${mid} | turns ${turns - 9}–${turns} | last / first | request body, first → last | whole run CPU |`);
        out.push('|---|---|---|---|---|---|---|');
        for (const r of longRuns) {
            const label = (RUNTIMES.find(([k]) => k === r.name) || [0, r.name])[1];
            const [early, middle, late] = windows(r.turn_cpu_us);
            out.push(`| ${label} | ${early.toFixed(0)} µs | ${middle.toFixed(0)} µs | ${late.toFixed(0)} µs | ${(late / early).toFixed(2)} | ${(r.first_request_bytes / 1024).toFixed(1)} KB → ${(r.last_request_bytes / 1024).toFixed(0)} KB | ${ms(r.cpu_us)} ms |`);
        }
    }
    if (callgrindFile && fs.existsSync(callgrindFile)) {
        const cg = JSON.parse(fs.readFileSync(callgrindFile, 'utf8'));
        const n = cg.turn_ir.length, mid = Math.floor(n / 2);
        const k = (x) => (x / 1000).toFixed(0) + 'k';
        const own = windows(cg.turn_ir), copy = windows(cg.body_copy_ir);
        out.push('');
        out.push(`| agentwire native, ${n}-turn run: user-space instructions a turn (callgrind, median of 10) | turns 1–10 | turns ${mid - 9}–${mid} | turns ${n - 9}–${n} | last / first |`);
        out.push('|---|---|---|---|---|');
        out.push(`| its own work: the reply read, the tools started and their output read, the next request built | ${own.map(k).join(' | ')} | ${(own[2] / own[0]).toFixed(2)} |`);
        out.push(`| copying the request body into curl's send buffer (the whole history, which the API wants in every request) | ${copy.map(k).join(' | ')} | ${(copy[2] / Math.max(copy[0], 1)).toFixed(0)}× |`);
    }
    return out.join('\n') + '\n';
}

if (command === 'script') process.stdout.write(script(Number(args[0]), Number(args[1]), args[2], args[3]));
else if (command === 'measure') process.stdout.write(JSON.stringify(measure(...args)) + '\n');
else if (command === 'callgrind') process.stdout.write(JSON.stringify(callgrind(...args)) + '\n');
else if (command === 'table') process.stdout.write(table(...args));
else {
    console.error('usage: runtime_job.js script TURNS CALLS native|xml NONCE | measure NAME LAUNCH RUSAGE LOG |\n' +
        '       callgrind DIR | table RESULTS [LONG [CALLGRIND]]');
    process.exit(2);
}
