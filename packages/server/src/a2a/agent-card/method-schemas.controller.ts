import { Controller, Get, Header } from '@nestjs/common';
import { RpcMethodRegistry } from '../../rpc/rpc-method.registry.js';
import type { JsonSchema } from '@cleveragents/contract';
import { METHOD_SCHEMAS_PATH, methodSchemaBundle } from '../../rpc/method-schemas.js';

/**
 * The JSON Schemas of every `_cleveragents/*` method's params and result, public as the Agent Card
 * is (which names this URL in its extension's params). Made from the same declarations and DTOs
 * that route and validate the calls.
 */
@Controller()
export class MethodSchemasController {
  private bundle: JsonSchema | undefined;

  constructor(private readonly registry: RpcMethodRegistry) {}

  @Get(METHOD_SCHEMAS_PATH.slice(1))
  @Header('Cache-Control', 'public, max-age=300')
  schemas(): JsonSchema {
    return (this.bundle ??= methodSchemaBundle(this.registry.declarations()));
  }
}
