/**
 * The client library on Node: everything the browser entry has, and local mode, the server run as a
 * subprocess speaking JSON-RPC over stdio (the server package, @cleveragents/server, installed beside it).
 */
import { connect as connectWith, type CleverAgentsClient, type ConnectOptions } from './lib/client.js';
import { StdioConnection } from './lib/stdio.js';

export * from './index.js';
export { StdioTransportFactory } from './lib/transports.js';
export {
  StdioConnection,
  defaultDataDir,
  defaultServerEntry,
  STDERR_TAIL_BYTES,
  type StdioOptions,
} from './lib/stdio.js';

/** Connects to a server (HTTP), a local server (stdio subprocess) or an external agent. */
export function connect(options: ConnectOptions): Promise<CleverAgentsClient> {
  return connectWith(options, (stdio) => StdioConnection.start(stdio));
}
