import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { CLIENT_METHODS } from '../../execution/orchestrator/protocol.js';
import { describedConstraint } from '../../rpc/schemas/params-schema.js';
import { OnlyWhen } from '../registry.kinds.js';
import { TOOL_LOCATIONS, type ToolLocation, type ToolSpec as ToolSpecContract } from '@cleveragents/contract';
import { MAX_DESCRIPTION_LENGTH } from './actor-spec.js';
import { compiledSchemaProblem } from './tool-input-schema.js';

export { TOOL_LOCATIONS };
/** The client-side methods a `client` tool maps to (docs/protocol.md §5): the orchestrator protocol's. */
export { CLIENT_METHODS };
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;

/**
 * What is wrong with a tool's input schema, or undefined: a JSON Schema of an object, as models take it,
 * that compiles (see compiledSchemaProblem).
 */
export function inputSchemaProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'inputSchema is not an object';
  const schema = value as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_INPUT_SCHEMA_BYTES) {
    return `inputSchema is larger than ${MAX_INPUT_SCHEMA_BYTES} bytes`;
  }
  if (schema.type !== 'object') return 'inputSchema must have "type": "object" (a tool takes a JSON object)';
  return compiledSchemaProblem(schema);
}

/** `tool`: a function an actor may call, described as models see it, and where it runs. */
export class ToolSpec implements ToolSpecContract {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description: string;

  @IsObject()
  @ValidateBy({
    // A JSON Schema of an object, compiled by the server to check it.
    name: describedConstraint('isToolInputSchema', { type: 'object' }),
    validator: {
      validate: (value) => inputSchemaProblem(value) === undefined,
      defaultMessage: (args) => inputSchemaProblem(args?.value) ?? 'inputSchema is invalid',
    },
  })
  inputSchema: Record<string, unknown>;

  /** `server`: the actor runs it; `client`: the client runs it through a client-request (docs/protocol.md §5). */
  @IsIn(TOOL_LOCATIONS, { message: `runsOn must be one of ${TOOL_LOCATIONS.join(', ')}` })
  runsOn: ToolLocation;

  @ValidateIf((o: ToolSpec) => o.runsOn === 'client' || o.clientMethod !== undefined)
  @IsIn(CLIENT_METHODS, { message: `clientMethod must be one of ${CLIENT_METHODS.join(', ')} for a client tool` })
  @OnlyWhen((o) => o.runsOn === 'client', 'is only for a tool that runs on the client')
  clientMethod?: (typeof CLIENT_METHODS)[number];

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86_400)
  timeoutSeconds?: number;
}
