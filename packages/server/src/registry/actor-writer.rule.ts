import { roleSatisfies } from '../common/principal.js';
import type { Acting } from '../common/actor.js';
import { adminRequired } from './registry.errors.js';
import { DEFAULT_ACTOR } from './registry.builtins.js';

/** What an actor runs with: changing one of these changes what every session of the actor may do. */
const RUN_WITH: readonly { field: string; of: (spec: ActorFields) => unknown }[] = [
  { field: 'spec.model.baseUrl', of: (spec) => spec.model?.baseUrl },
  { field: 'spec.a2a.url', of: (spec) => spec.a2a?.url },
  // A credential given is a change: the stored one is sealed, so the two cannot be compared.
  {
    field: 'spec.a2a.auth',
    of: (spec) => spec.a2a?.auth && { scheme: spec.a2a.auth.scheme, given: spec.a2a.auth.credential !== undefined },
  },
  { field: 'spec.profile', of: (spec) => spec.profile },
  { field: 'spec.tools', of: (spec) => [...new Set(spec.tools ?? [])].sort() },
];

interface ActorFields {
  model?: { baseUrl?: string };
  a2a?: { url?: string; auth?: { scheme?: string; credential?: string } };
  profile?: string;
  tools?: string[];
}

/**
 * An actor write by a `member` may not change what the actor runs with (model endpoint, A2A agent and
 * its credential, profile, tool allow-list) nor the namespace's `default` actor's spec: those take `admin`, as profiles do.
 * `before`/`after` are the stored and the new spec (undefined: none, i.e. a create or a delete).
 */
export function requireActorWriter(
  by: Acting,
  namespace: string,
  name: string,
  before: object | undefined,
  after: object | undefined,
): void {
  const held = by.actor.roleIn(namespace);
  if (held !== undefined && roleSatisfies(held, 'admin')) return;
  let what: string | undefined;
  let fields: string[] = [];
  if (name === DEFAULT_ACTOR) {
    if (canonical(before) !== canonical(after)) what = "Changing the namespace's default actor";
  } else {
    fields = RUN_WITH.filter(
      ({ of }) => canonical(of((before ?? {}) as ActorFields)) !== canonical(of((after ?? {}) as ActorFields)),
    ).map(({ field }) => field);
    if (fields.length > 0) what = `Changing what actor ${name} runs with (${fields.join(', ')})`;
  }
  if (what === undefined) return;
  throw adminRequired(what, namespace, held, fields);
}

/** JSON with object keys sorted: a stored (jsonb) spec and a sent one compare by content. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
