import type { Command } from 'commander';
import { readCredentials, serverKey, writeCredentials, credentialsPath } from '../credentials.js';
import { ioFor, type GlobalOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';

export async function login(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<{ apiKey?: string; default: boolean }>();
  const io = ioFor(options);
  const apiKey = opts.apiKey ?? options.apiKey;
  if (!apiKey) throw new CliError('login needs the API key', EXIT.USAGE, 'pass --api-key KEY');
  const server = options.server ?? io.env.CLEVERAGENTS_SERVER;
  if (!server) {
    throw new CliError('login needs the server', EXIT.USAGE, 'pass --server URL (or set CLEVERAGENTS_SERVER)');
  }
  const file = await readCredentials(io.env);
  const key = serverKey(server);
  file.servers[key] = { apiKey, savedAt: new Date().toISOString() };
  if (opts.default !== false) file.defaultServer = key;
  const path = await writeCredentials(file, io.env);
  io.err.write(`Stored the API key for ${key} in ${path}${file.defaultServer === key ? ' (default server)' : ''}\n`);
  return EXIT.OK;
}

export async function logout(options: GlobalOptions): Promise<number> {
  const io = ioFor(options);
  const file = await readCredentials(io.env);
  const server = options.server ?? io.env.CLEVERAGENTS_SERVER ?? file.defaultServer;
  if (!server || !file.servers[serverKey(server)]) {
    io.err.write(`No stored login${server ? ` for ${serverKey(server)}` : ''} in ${credentialsPath(io.env)}\n`);
    return EXIT.OK;
  }
  delete file.servers[serverKey(server)];
  if (file.defaultServer === serverKey(server)) delete file.defaultServer;
  await writeCredentials(file, io.env);
  io.err.write(`Forgot the login for ${serverKey(server)}\n`);
  return EXIT.OK;
}
