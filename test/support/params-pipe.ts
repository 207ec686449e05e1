import 'reflect-metadata';
import type { PipeTransform } from '@nestjs/common';
import { ValidationError } from '../../packages/server/src/common/domain.errors.js';
import { RPC_ARGS_METADATA } from '../../packages/server/src/rpc/rpc-params.pipe.js';

/**
 * The params pipe @RpcMethod gave handler `key` of `handlers`, as a check: 'ok' when it takes the params, else the
 * fields it names (sorted, each once).
 */
export function paramsPipe<T extends object>(
  handlers: abstract new (...args: never[]) => T,
  key: keyof T,
): (params: unknown) => 'ok' | string[] {
  const args = Reflect.getMetadata(RPC_ARGS_METADATA, handlers, key as string) as Record<
    string,
    { pipes: PipeTransform[] }
  >;
  return (params) => {
    try {
      args['0:0'].pipes[0].transform(params, { type: 'custom' });
      return 'ok';
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return [...new Set(error.violations.map((violation) => violation.field))].sort();
    }
  };
}
