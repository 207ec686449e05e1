import { Injectable, ValidationPipe, type PipeTransform } from '@nestjs/common';
import type { ParamsFactory } from '@nestjs/core/helpers/external-context-creator.js';
import * as classTransformer from 'class-transformer';
import { getMetadataStorage, validate } from 'class-validator';
import type { ValidationError as ClassValidationError } from 'class-validator';
import { violationsOf, type WireSchema } from '@cleveragents/contract';
import { ValidationError, type FieldViolation } from '../common/domain.errors.js';
import { rpcArgumentOf, type RpcCallArgument } from './rpc-call.decorators.js';
import type { RpcCallContext } from './rpc-context.js';

/**
 * Where @RpcMethod records a handler's arguments, as Nest's param decorators do for a controller's:
 * the params (validated by the method's pipe) first, then what the call decorators mark (rpc-call.decorators.ts).
 */
export const RPC_ARGS_METADATA = 'cleveragents:rpc-args';

/** What each argument of a handler is made from: the params, or the call (its `data` says what of it). */
export enum RpcParamtype {
  PARAMS = 0,
  CALL = 1,
}

/** The pipeline is called with `(params, context)`; a call argument (its `data` says which) is resolved from both. */
export const rpcParamsFactory: ParamsFactory = {
  exchangeKeyForValue: (_type: number, data: unknown, args: unknown[]) =>
    data === undefined
      ? args[0]
      : rpcArgumentOf(data as RpcCallArgument, args[0] as { namespace?: unknown }, args[1] as RpcCallContext),
};

/**
 * What ValidationPipe uses of class-validator: named, not the whole namespace, so that the bundle keeps
 * only the decorators the DTOs use (scripts/bundle-server.mjs builds from class-validator's ES modules).
 */
const validatorPackage = { validate, getMetadataStorage };

/**
 * The params pipe of a method with a class-validator DTO: Nest's ValidationPipe, strict (unknown
 * fields refused, no implicit conversion), its violations as -32602 with a BadRequest listing them.
 */
export function paramsPipeFor(dto: new () => object): PipeTransform {
  return new ValidationPipe({
    expectedType: dto,
    // Nest names every argument that is not a route's body, query or param `custom`, which
    // ValidationPipe skips unless told otherwise.
    validateCustomDecorators: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    exceptionFactory: (errors) => new ValidationError(flattenViolations(errors)),
    // The packages the DTOs' decorators use, handed over rather than left to the pipe's own import(),
    // whose answer differs in the bundled build (scripts/bundle-server.mjs): a CommonJS package's
    // namespace there has only `default`.
    validatorPackage,
    transformerPackage: classTransformer,
  });
}

/**
 * The params pipe of a method whose params the contract declares as a schema: the params as the schema
 * makes them, or -32602 naming each offending field (unknown fields included).
 */
export function schemaParamsPipe(schema: WireSchema): PipeTransform {
  return {
    transform(params: unknown): unknown {
      const parsed = schema.safeParse(params);
      if (!parsed.success) throw new ValidationError(violationsOf(parsed.error));
      return parsed.data;
    },
  };
}

/** The params pipe of a method that takes none: only `namespace` (which every call may name) is allowed. */
@Injectable()
export class NoParamsPipe implements PipeTransform<Record<string, unknown>> {
  transform(params: Record<string, unknown>): Record<string, unknown> {
    const unexpected = Object.keys(params).filter((k) => k !== 'namespace');
    if (unexpected.length > 0) {
      throw new ValidationError(
        unexpected.map((field) => ({ field, description: 'unknown field: this method takes no params' })),
      );
    }
    return params;
  }
}

/** class-validator's nested errors as field paths, as JSON paths name them: `changes[3].spec.x`. */
export function flattenViolations(errors: ClassValidationError[], prefix = ''): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const e of errors) {
    const field = !prefix
      ? e.property
      : /^\d+$/.test(e.property)
        ? `${prefix}[${e.property}]`
        : `${prefix}.${e.property}`;
    for (const description of Object.values(e.constraints ?? {})) out.push({ field, description });
    if (e.children && e.children.length > 0) out.push(...flattenViolations(e.children, field));
  }
  return out;
}
