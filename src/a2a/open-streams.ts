import { Injectable } from '@nestjs/common';
import type { JsonRpcId, JsonRpcResponse } from './jsonrpc.types.js';
import { protocolError, RPC_CODES } from './rpc-error.mapper.js';

export interface OpenStream {
  id: JsonRpcId;
  /** Writes one last event and closes the stream. */
  close(last: JsonRpcResponse): void;
}

/** Open streaming responses of this process, so that a graceful shutdown can end each with a last event. */
@Injectable()
export class OpenStreams {
  private readonly streams = new Set<OpenStream>();

  add(stream: OpenStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  get size(): number {
    return this.streams.size;
  }

  closeAll(): number {
    const count = this.streams.size;
    for (const stream of [...this.streams]) {
      stream.close({
        jsonrpc: '2.0',
        id: stream.id,
        error: protocolError(
          RPC_CODES.INTERNAL_ERROR,
          'The server is shutting down; subscribe to the task again to continue',
          'SERVER_SHUTTING_DOWN',
          { retryable: 'true' },
        ),
      });
    }
    this.streams.clear();
    return count;
  }
}
