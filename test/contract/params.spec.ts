import { describe, expect, it } from '@jest/globals';
import type { CreateApiKeyParams } from '../../packages/server/src/auth/apikey/dto/create-api-key.params.js';
import type { ListApiKeysParams } from '../../packages/server/src/auth/apikey/dto/list-api-keys.params.js';
import type { RevokeApiKeyParams } from '../../packages/server/src/auth/apikey/dto/revoke-api-key.params.js';
import type { ListAuditParams } from '../../packages/server/src/audit/dto/list-audit.params.js';
import {
  EXTENSION_METHOD_NAMES,
  METHOD_SCHEMAS,
  METHODS,
  type NoParams,
  type ParamsOf,
  type z,
} from '../../packages/contract/src/index.js';
import type {
  CreatePlanParams,
  ExecutePlanParams,
  ListPlansParams,
  PlanChangeParams,
  PlanKeyParams,
  UpdatePlanParams,
} from '../../packages/server/src/plan/dto/plan.params.js';
import type {
  AssembleContextParams,
  CloseSessionParams,
  CreateSessionParams,
  ListSessionsParams,
  SessionHistoryParams,
  SessionKeyParams,
} from '../../packages/server/src/session/dto/session.params.js';

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
  [METHODS.audit.list]: true satisfies Agree<ListAuditParams, ParamsOf<typeof METHODS.audit.list>>,
  [METHODS.auth.whoami]: true satisfies Same<ParamsOf<typeof METHODS.auth.whoami>, NoParams>,
  [METHODS.auth.apikeyCreate]: true satisfies Agree<CreateApiKeyParams, ParamsOf<typeof METHODS.auth.apikeyCreate>>,
  [METHODS.auth.apikeyList]: true satisfies Agree<ListApiKeysParams, ParamsOf<typeof METHODS.auth.apikeyList>>,
  [METHODS.auth.apikeyRevoke]: true satisfies Agree<RevokeApiKeyParams, ParamsOf<typeof METHODS.auth.apikeyRevoke>>,
  [METHODS.context.assemble]: true satisfies Agree<AssembleContextParams, ParamsOf<typeof METHODS.context.assemble>>,
  [METHODS.diagnostics.health]: true satisfies Same<ParamsOf<typeof METHODS.diagnostics.health>, NoParams>,
  [METHODS.diagnostics.info]: true satisfies Same<ParamsOf<typeof METHODS.diagnostics.info>, NoParams>,
  [METHODS.namespace.create]: true satisfies Declared<typeof METHODS.namespace.create>,
  [METHODS.namespace.get]: true satisfies Declared<typeof METHODS.namespace.get>,
  [METHODS.namespace.list]: true satisfies Declared<typeof METHODS.namespace.list>,
  [METHODS.namespace.update]: true satisfies Declared<typeof METHODS.namespace.update>,
  [METHODS.namespace.delete]: true satisfies Declared<typeof METHODS.namespace.delete>,
  [METHODS.namespace.membersList]: true satisfies Declared<typeof METHODS.namespace.membersList>,
  [METHODS.namespace.membersSet]: true satisfies Declared<typeof METHODS.namespace.membersSet>,
  [METHODS.namespace.membersRemove]: true satisfies Declared<typeof METHODS.namespace.membersRemove>,
  [METHODS.plan.create]: true satisfies Agree<CreatePlanParams, ParamsOf<typeof METHODS.plan.create>>,
  [METHODS.plan.get]: true satisfies Agree<PlanKeyParams, ParamsOf<typeof METHODS.plan.get>>,
  [METHODS.plan.list]: true satisfies Agree<ListPlansParams, ParamsOf<typeof METHODS.plan.list>>,
  [METHODS.plan.update]: true satisfies Agree<UpdatePlanParams, ParamsOf<typeof METHODS.plan.update>>,
  [METHODS.plan.delete]: true satisfies Agree<PlanChangeParams, ParamsOf<typeof METHODS.plan.delete>>,
  [METHODS.plan.status]: true satisfies Agree<PlanKeyParams, ParamsOf<typeof METHODS.plan.status>>,
  [METHODS.plan.approve]: true satisfies Agree<PlanChangeParams, ParamsOf<typeof METHODS.plan.approve>>,
  [METHODS.plan.execute]: true satisfies Agree<ExecutePlanParams, ParamsOf<typeof METHODS.plan.execute>>,
  [METHODS.plan.pause]: true satisfies Agree<PlanChangeParams, ParamsOf<typeof METHODS.plan.pause>>,
  [METHODS.plan.resume]: true satisfies Agree<PlanChangeParams, ParamsOf<typeof METHODS.plan.resume>>,
  [METHODS.plan.cancel]: true satisfies Agree<PlanChangeParams, ParamsOf<typeof METHODS.plan.cancel>>,
  [METHODS.registry.create]: true satisfies Declared<typeof METHODS.registry.create>,
  [METHODS.registry.get]: true satisfies Declared<typeof METHODS.registry.get>,
  [METHODS.registry.list]: true satisfies Declared<typeof METHODS.registry.list>,
  [METHODS.registry.update]: true satisfies Declared<typeof METHODS.registry.update>,
  [METHODS.registry.delete]: true satisfies Declared<typeof METHODS.registry.delete>,
  [METHODS.session.create]: true satisfies Agree<CreateSessionParams, ParamsOf<typeof METHODS.session.create>>,
  [METHODS.session.get]: true satisfies Agree<SessionKeyParams, ParamsOf<typeof METHODS.session.get>>,
  [METHODS.session.list]: true satisfies Agree<ListSessionsParams, ParamsOf<typeof METHODS.session.list>>,
  [METHODS.session.history]: true satisfies Agree<SessionHistoryParams, ParamsOf<typeof METHODS.session.history>>,
  [METHODS.session.close]: true satisfies Agree<CloseSessionParams, ParamsOf<typeof METHODS.session.close>>,
  [METHODS.sync.pull]: true satisfies Declared<typeof METHODS.sync.pull>,
  [METHODS.sync.push]: true satisfies Declared<typeof METHODS.sync.push>,
  [METHODS.sync.status]: true satisfies Declared<typeof METHODS.sync.status>,
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
