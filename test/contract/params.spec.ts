import { describe, expect, it } from '@jest/globals';
import {
  EXTENSION_METHOD_NAMES,
  METHOD_SCHEMAS,
  METHODS,
  type ParamsOf,
  type z,
} from '../../packages/contract/src/index.js';
import type { CreateEntryParams } from '../../packages/server/src/registry/dto/create-entry.params.js';
import type { DeleteEntryParams } from '../../packages/server/src/registry/dto/delete-entry.params.js';
import type { GetEntryParams } from '../../packages/server/src/registry/dto/get-entry.params.js';
import type { ListEntriesParams } from '../../packages/server/src/registry/dto/list-entries.params.js';
import type { UpdateEntryParams } from '../../packages/server/src/registry/dto/update-entry.params.js';
import type { PullParams } from '../../packages/server/src/sync/dto/pull.params.js';
import type { PushParams } from '../../packages/server/src/sync/dto/push.params.js';
import type { StatusParams } from '../../packages/server/src/sync/dto/status.params.js';

/*
 * A DTO `implements` its contract params, which catches a field of the wrong type; these checks add
 * the rest, at compile time: the DTO a handler validates with has exactly the contract's fields, each
 * required or optional as the contract says, and the two types accept the same values.
 */

/** Each key of T, and whether T requires it. */
type Keys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : 'required' };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `true` when the DTO and the contract's params agree on keys, optionality and values, else `false`. */
type Agree<Dto, Contract> = Same<Keys<Dto>, Keys<Contract>> extends true ? Same<Dto, Contract> : false;

/** A method whose params the contract declares as a schema: the handler validates with that very schema. */
type Declared<M extends keyof typeof METHOD_SCHEMAS> = Same<z.input<(typeof METHOD_SCHEMAS)[M]['params']>, ParamsOf<M>>;

/** Per method: does the DTO its handler validates with agree with the contract? (`true` only compiles.) */
const agreement: { [M in (typeof EXTENSION_METHOD_NAMES)[number]]: true } = {
  [METHODS.audit.list]: true satisfies Declared<typeof METHODS.audit.list>,
  [METHODS.auth.whoami]: true satisfies Declared<typeof METHODS.auth.whoami>,
  [METHODS.auth.apikeyCreate]: true satisfies Declared<typeof METHODS.auth.apikeyCreate>,
  [METHODS.auth.apikeyList]: true satisfies Declared<typeof METHODS.auth.apikeyList>,
  [METHODS.auth.apikeyRevoke]: true satisfies Declared<typeof METHODS.auth.apikeyRevoke>,
  [METHODS.context.assemble]: true satisfies Declared<typeof METHODS.context.assemble>,
  [METHODS.diagnostics.health]: true satisfies Declared<typeof METHODS.diagnostics.health>,
  [METHODS.diagnostics.info]: true satisfies Declared<typeof METHODS.diagnostics.info>,
  [METHODS.namespace.create]: true satisfies Declared<typeof METHODS.namespace.create>,
  [METHODS.namespace.get]: true satisfies Declared<typeof METHODS.namespace.get>,
  [METHODS.namespace.list]: true satisfies Declared<typeof METHODS.namespace.list>,
  [METHODS.namespace.update]: true satisfies Declared<typeof METHODS.namespace.update>,
  [METHODS.namespace.delete]: true satisfies Declared<typeof METHODS.namespace.delete>,
  [METHODS.namespace.membersList]: true satisfies Declared<typeof METHODS.namespace.membersList>,
  [METHODS.namespace.membersSet]: true satisfies Declared<typeof METHODS.namespace.membersSet>,
  [METHODS.namespace.membersRemove]: true satisfies Declared<typeof METHODS.namespace.membersRemove>,
  [METHODS.plan.create]: true satisfies Declared<typeof METHODS.plan.create>,
  [METHODS.plan.get]: true satisfies Declared<typeof METHODS.plan.get>,
  [METHODS.plan.list]: true satisfies Declared<typeof METHODS.plan.list>,
  [METHODS.plan.update]: true satisfies Declared<typeof METHODS.plan.update>,
  [METHODS.plan.delete]: true satisfies Declared<typeof METHODS.plan.delete>,
  [METHODS.plan.status]: true satisfies Declared<typeof METHODS.plan.status>,
  [METHODS.plan.approve]: true satisfies Declared<typeof METHODS.plan.approve>,
  [METHODS.plan.execute]: true satisfies Declared<typeof METHODS.plan.execute>,
  [METHODS.plan.pause]: true satisfies Declared<typeof METHODS.plan.pause>,
  [METHODS.plan.resume]: true satisfies Declared<typeof METHODS.plan.resume>,
  [METHODS.plan.cancel]: true satisfies Declared<typeof METHODS.plan.cancel>,
  [METHODS.registry.create]: true satisfies Agree<CreateEntryParams, ParamsOf<typeof METHODS.registry.create>>,
  [METHODS.registry.get]: true satisfies Agree<GetEntryParams, ParamsOf<typeof METHODS.registry.get>>,
  [METHODS.registry.list]: true satisfies Agree<ListEntriesParams, ParamsOf<typeof METHODS.registry.list>>,
  [METHODS.registry.update]: true satisfies Agree<UpdateEntryParams, ParamsOf<typeof METHODS.registry.update>>,
  [METHODS.registry.delete]: true satisfies Agree<DeleteEntryParams, ParamsOf<typeof METHODS.registry.delete>>,
  [METHODS.session.create]: true satisfies Declared<typeof METHODS.session.create>,
  [METHODS.session.get]: true satisfies Declared<typeof METHODS.session.get>,
  [METHODS.session.list]: true satisfies Declared<typeof METHODS.session.list>,
  [METHODS.session.history]: true satisfies Declared<typeof METHODS.session.history>,
  [METHODS.session.close]: true satisfies Declared<typeof METHODS.session.close>,
  [METHODS.sync.pull]: true satisfies Agree<PullParams, ParamsOf<typeof METHODS.sync.pull>>,
  [METHODS.sync.push]: true satisfies Agree<PushParams, ParamsOf<typeof METHODS.sync.push>>,
  [METHODS.sync.status]: true satisfies Agree<StatusParams, ParamsOf<typeof METHODS.sync.status>>,
};

/** The same checks on made-up types: each kind of drift makes Agree false. */
type DriftCases = [
  Agree<{ a: string; b?: number }, { a: string; b?: number }>,
  Agree<{ a: string; b?: number; extra?: string }, { a: string; b?: number }>,
  Agree<{ a: string }, { a: string; b?: number }>,
  Agree<{ a: string; b: number }, { a: string; b?: number }>,
  Agree<{ a: 'x' }, { a: 'x' | 'y' }>,
];

describe('params: the DTOs the server validates with are the contract params', () => {
  it('every method of METHODS is checked', () => {
    expect(Object.keys(agreement).sort()).toEqual([...EXTENSION_METHOD_NAMES].sort());
  });

  it('the check bites: an extra field, a missing one, a required one and a narrower type each disagree', () => {
    const cases: DriftCases = [true, false, false, false, false];
    expect(cases).toEqual([true, false, false, false, false]);
  });
});
