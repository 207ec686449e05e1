import type { CleverAgentsClient, PublishedSchemas } from '@cleveragents/client';
import type { RegistryKind } from '@cleveragents/contract';
import { useMemo } from 'react';
import { useLoad } from '../lib/calls';
import { specCheck, specSchemaOf, type SpecCheck } from './spec-check';

// Read once per connection: the schemas change only with the server.
const loaded = new WeakMap<CleverAgentsClient, Promise<PublishedSchemas | undefined>>();

function schemasOf(client: CleverAgentsClient): Promise<PublishedSchemas | undefined> {
  let schemas = loaded.get(client);
  if (!schemas) {
    schemas = client.methodSchemas().catch(() => undefined);
    loaded.set(client, schemas);
  }
  return schemas;
}

export type SpecMethod = 'create' | 'update';

/**
 * The check of a `kind` spec before `registry/<method>` sends it, from the server's published params schema;
 * `published` false when the server offers none (then only the server checks it).
 */
export function useSpecCheck(
  client: CleverAgentsClient,
  kind: RegistryKind,
  method: SpecMethod,
): { check?: SpecCheck; published: boolean } {
  const schemas = useLoad(() => schemasOf(client), [client]);
  return useMemo(() => {
    if (schemas.loading && !schemas.data) return { published: false };
    const params = schemas.data?.methods[`_cleveragents/registry/${method}`]?.params;
    const schema = params ? specSchemaOf(params, kind) : undefined;
    return { check: specCheck(schema), published: schema !== undefined };
  }, [schemas.data, schemas.loading, kind, method]);
}
