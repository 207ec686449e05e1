// --import hook for bench/socket-writes.mjs: counts the server's socket writes (each a write or writev
// syscall), split into PostgreSQL (remote port 5432 or BENCH_PG_PORT) and HTTP (sockets of a server);
// writes the counts as JSON to BENCH_WRITES_FILE on SIGWINCH.
import net from 'node:net';
import { writeFileSync } from 'node:fs';

const pgPort = Number(process.env.BENCH_PG_PORT || 5432);
const counts = { http: 0, pg: 0, other: 0 };
const writeGeneric = net.Socket.prototype._writeGeneric;
net.Socket.prototype._writeGeneric = function (...args) {
  if (this.remotePort === pgPort) counts.pg++;
  else if (this.server) counts.http++;
  else counts.other++;
  return writeGeneric.apply(this, args);
};
process.on('SIGWINCH', () => writeFileSync(process.env.BENCH_WRITES_FILE, JSON.stringify(counts)));
