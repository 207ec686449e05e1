import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postgresBinaries } from './postgres-env.js';
import { freePort } from './server.js';

const run = promisify(execFile);

export { postgresBinaries };

/**
 * A throwaway PostgreSQL cluster on a free loopback port, which a fault test stops and starts at will
 * (a failover, a restart, an outage). Run as the `postgres` user when the tests run as root, since
 * PostgreSQL refuses to run as root. Trust auth; `url` names its `postgres` database.
 */
export class PostgresCluster {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(bin: string): Promise<PostgresCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'cleveragents-pg-cluster-'));
    const cluster = new PostgresCluster(bin, dir, await freePort());
    if (userInfo().uid === 0) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    await chmod(dir, 0o700);
    await cluster.as('initdb', ['-D', cluster.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await cluster.resume();
    return cluster;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** `pg_ctl restart -m fast`: every connection is cut, the server is back at once. */
  restart(): Promise<void> {
    return this.ctl(['restart', '-m', 'fast']);
  }

  /** Stops the server (`-m fast`: connections are cut, as in a failover). */
  stop(): Promise<void> {
    return this.ctl(['stop', '-m', 'fast']);
  }

  /** Starts (again) the stopped server and waits until it accepts connections. */
  resume(): Promise<void> {
    return this.ctl(['start']);
  }

  async destroy(): Promise<void> {
    await this.ctl(['stop', '-m', 'immediate']).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private ctl(args: string[]): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dir} -c fsync=off`;
    return this.as('pg_ctl', ['-D', this.data, '-w', '-t', '30', '-l', join(this.dir, 'log'), '-o', options, ...args]);
  }

  private async as(program: string, args: string[]): Promise<void> {
    const path = join(this.bin, program);
    if (userInfo().uid === 0) await run('runuser', ['-u', 'postgres', '--', path, ...args]);
    else await run(path, args);
  }
}
