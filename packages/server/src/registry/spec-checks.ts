import { isURL } from 'class-validator';
import type { SpecChecks } from '@cleveragents/contract';
import { inputSchemaProblem } from './tool-input-schema.js';

/** The spec checks the contract leaves to the server (installSpecChecks): a URL's shape, a tool's input schema. */
export const SERVER_SPEC_CHECKS: SpecChecks = {
  isHttpUrl: (value) => isURL(value, { protocols: ['http', 'https'], require_protocol: true, require_tld: false }),
  inputSchemaProblem,
};
