import { Injectable } from '@nestjs/common';
import { RpcMetrics } from '../metrics/metrics.service.js';
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

  constructor(private readonly metrics: RpcMetrics) {}

  add(stream: OpenStream): () => void {
    this.streams.add(stream);
    this.metrics.openStreams.inc();
    return () => {
      if (this.streams.delete(stream)) this.metrics.openStreams.dec();
    };
  }

  closeAll(): number {
    const count = this.streams.size;
    for (const stream of [...this.streams]) {
      this.streams.delete(stream);
      this.metrics.openStreams.dec();
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
    return count;
  }
}
