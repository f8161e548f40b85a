// node mcp_peer.js SERVER_JS CALLS — the same tool-call round trips as
// bench/bench_mcp.c through the official TypeScript SDK client
// (@modelcontextprotocol/sdk: Client over StdioClientTransport): one call at a
// time, then 8 in flight. Prints, for each:
//   MODE calls=N seconds=S client_cpu_us=C client_user_us=U server_cpu_us=V
// client CPU is this process's (process.cpuUsage), the server's is read from
// /proc for the child it spawned.
'use strict';
const fs = require('fs');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const [serverJs, callsArg] = process.argv.slice(2);
const calls = Number(callsArg);

function serverCpuUs() {
    try {
        const pid = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/)[0];
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return ((Number(f[11]) + Number(f[12])) * 1e6) / 100; // USER_HZ is 100 on Linux
    } catch (e) {
        return 0;
    }
}

async function callEcho(client) {
    const res = await client.callTool({ name: 'echo', arguments: { message: 'hello, world' } });
    if (!res.content || res.content[0].text !== 'Echo: hello, world') throw new Error('unexpected result ' + JSON.stringify(res));
}

async function run(client, mode, n, inFlight) {
    const cpu0 = process.cpuUsage(), srv0 = serverCpuUs(), t0 = process.hrtime.bigint();
    let next = 0;
    const worker = async () => {
        while (next < n) {
            next++;
            await callEcho(client);
        }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0), srv = serverCpuUs() - srv0;
    if (mode) console.log(`${mode} calls=${n} seconds=${secs.toFixed(6)} client_cpu_us=${cpu.user + cpu.system} client_user_us=${cpu.user} server_cpu_us=${srv.toFixed(0)}`);
}

(async () => {
    const transport = new StdioClientTransport({ command: 'node', args: [serverJs, 'stdio'], stderr: 'ignore' });
    const client = new Client({ name: 'bench-peer', version: '1.0.0' });
    await client.connect(transport);
    await run(client, null, Math.floor(calls / 10) + 10, 1);
    await run(client, 'sequential', calls, 1);
    await run(client, 'inflight8', calls, 8);
    await client.close();
})().catch((e) => {
    console.error('mcp_peer: ' + e.message);
    process.exit(1);
});
