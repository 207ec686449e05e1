import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line of one call carries (STYLE.md: request id, JSON-RPC id and method, principal). */
export interface RequestContextFields {
  requestId: string;
  rpcId?: string | number | null;
  method?: string;
  principal?: string;
  transport?: 'http' | 'stdio';
}

const storage = new AsyncLocalStorage<RequestContextFields>();

export const RequestContext = {
  run<T>(fields: RequestContextFields, fn: () => T): T {
    return storage.run(fields, fn);
  },
  current(): RequestContextFields | undefined {
    return storage.getStore();
  },
  /** Adds fields to the running call's context (e.g. the method once the body is parsed). */
  assign(fields: Partial<RequestContextFields>): void {
    const store = storage.getStore();
    if (store) Object.assign(store, fields);
  },
};
