import { Validator, type OutputUnit } from '@cfworker/json-schema';
import type { RegistryKind } from '@cleveragents/contract';

/** What is wrong with a spec, named by its path in the params as the server names it (`spec.model.temperature`). */
export interface Violation {
  path: string;
  message: string;
}

/** Checks a spec's text; answers the spec when it is a JSON object and the problems found. */
export type SpecCheck = (text: string) => { spec?: Record<string, unknown>; violations: Violation[] };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The spec schema of `kind` inside a method's published params schema: the `then` of the `allOf` entry whose
 * `if` names the kind; the plain `spec` property when there is none.
 */
export function specSchemaOf(params: Json, kind: RegistryKind): Json | undefined {
  const branches = Array.isArray(params.allOf) ? params.allOf : [];
  for (const branch of branches) {
    if (!isObject(branch) || !isObject(branch.if) || !isObject(branch.then)) continue;
    const kindRule = (branch.if.properties as Json | undefined)?.kind;
    const spec = (branch.then.properties as Json | undefined)?.spec;
    if (isObject(kindRule) && kindRule.const === kind && isObject(spec)) return spec;
  }
  const spec = (params.properties as Json | undefined)?.spec;
  return isObject(spec) ? spec : undefined;
}

/** `#/model/temperature` → `spec.model.temperature`. */
function pathOf(instanceLocation: string, extra?: string): string {
  const steps = instanceLocation
    .replace(/^#\/?/, '')
    .split('/')
    .filter((step) => step !== '')
    .map((step) => decodeURIComponent(step).replace(/~1/g, '/').replace(/~0/g, '~'));
  return ['spec', ...steps, ...(extra === undefined ? [] : [extra])].join('.');
}

// Keywords that only say a part below them failed: the part's own error says what.
const SUMMARIES = new Set(['properties', 'items', 'prefixItems', 'allOf', 'if', 'then', 'else', '$ref', 'false']);

/**
 * The validator's output said plainly: summaries dropped, the `null` branch of an optional field dropped when
 * another error names the same place or one inside it, a missing or unknown field named by its own path.
 */
export function violationsOf(errors: readonly OutputUnit[]): Violation[] {
  const found: Violation[] = [];
  for (const error of errors) {
    if (SUMMARIES.has(error.keyword)) continue;
    const named = /"([^"]*)"/.exec(error.error)?.[1];
    if (error.keyword === 'required' && named !== undefined) {
      found.push({ path: pathOf(error.instanceLocation, named), message: 'is required' });
    } else if (error.keyword === 'additionalProperties' && named !== undefined) {
      found.push({ path: pathOf(error.instanceLocation, named), message: 'is not a field of this spec' });
    } else if (error.keyword === 'anyOf') {
      continue;
    } else {
      found.push({ path: pathOf(error.instanceLocation), message: error.error });
    }
  }
  const withoutNull = found.filter(
    (violation) =>
      !violation.message.endsWith('Expected "null".') ||
      !found.some(
        (other) =>
          other !== violation && (other.path === violation.path || other.path.startsWith(`${violation.path}.`)),
      ),
  );
  const seen = new Set<string>();
  return withoutNull.filter((violation) => {
    const key = `${violation.path}\n${violation.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A check of a spec's JSON text against `schema` (none: only that it is a JSON object; the server checks the rest). */
export function specCheck(schema: Json | undefined): SpecCheck {
  const validator = schema === undefined ? undefined : new Validator(schema, '2020-12', false);
  return (text) => {
    let spec: unknown;
    try {
      spec = JSON.parse(text);
    } catch (error) {
      return { violations: [{ path: 'spec', message: `is not JSON: ${(error as Error).message}` }] };
    }
    if (!isObject(spec)) return { violations: [{ path: 'spec', message: 'must be a JSON object' }] };
    const violations = validator ? violationsOf(validator.validate(spec).errors) : [];
    return { spec, violations };
  };
}
