import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { StreamLimitError } from '../common/domain.errors.js';
import type { Principal } from '../common/principal.js';
import { RpcMetrics } from '../metrics/metrics.service.js';
import type { JsonRpcId, JsonRpcResponse, StreamSlot } from './jsonrpc.types.js';

export type { StreamSlot };
import { protocolError, RPC_CODES } from '../rpc/rpc-error.mapper.js';

export interface OpenStream {
  id: JsonRpcId;
  /** Writes one last event and closes the stream. */
  close(last: JsonRpcResponse): void;
  /** The slot the stream holds; released when the stream is untracked or closed. */
  slot?: StreamSlot;
}

const NO_SLOT: StreamSlot = { release: () => undefined };

/**
 * Open streaming responses of this process, so that a graceful shutdown can end each with a last
 * event, and the streams each principal holds, capped at CLEVERAGENTS_MAX_STREAMS_PER_PRINCIPAL.
 */
@Injectable()
export class OpenStreams {
  private readonly streams = new Set<OpenStream>();
  private readonly held = new Map<string, number>();

  constructor(
    private readonly metrics: RpcMetrics,
    private readonly config: AppConfig,
  ) {}

  /**
   * Takes one of the principal's stream slots, or throws StreamLimitError when all are taken.
   * `none` (every caller is one anonymous principal) and local mode (one user) are not capped.
   */
  reserve(principal: Principal): StreamSlot {
    if (principal.scheme === 'none' || principal.scheme === 'local') return NO_SLOT;
    const subject = principal.subject;
    const count = this.held.get(subject) ?? 0;
    if (count >= this.config.maxStreamsPerPrincipal) throw new StreamLimitError(this.config.maxStreamsPerPrincipal);
    this.held.set(subject, count + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.held.get(subject) ?? 1) - 1;
        if (left > 0) this.held.set(subject, left);
        else this.held.delete(subject);
      },
    };
  }

  add(stream: OpenStream): () => void {
    this.streams.add(stream);
    this.metrics.openStreams.inc();
    return () => {
      stream.slot?.release();
      if (this.streams.delete(stream)) this.metrics.openStreams.dec();
    };
  }

  closeAll(): number {
    const count = this.streams.size;
    for (const stream of [...this.streams]) {
      this.streams.delete(stream);
      this.metrics.openStreams.dec();
      stream.slot?.release();
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
