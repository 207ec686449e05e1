// A local server that is the real one (dist/main.js --stdio) with every request line it is sent also written
// to the file STDIO_RECORD_FILE: what a client put on the wire, read back by a test.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../packages/server/dist/main.js', import.meta.url));
const record = process.env.STDIO_RECORD_FILE;
if (!record) throw new Error('stdio-recorder: set STDIO_RECORD_FILE');
const server = spawn(process.execPath, [main, ...process.argv.slice(2)], { stdio: ['pipe', 'inherit', 'inherit'] });
createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    appendFileSync(record, `${line}\n`);
    server.stdin.write(`${line}\n`);
  })
  .on('close', () => server.stdin.end());
server.on('exit', (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)));
