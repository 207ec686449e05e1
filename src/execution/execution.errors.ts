import { ValidationError } from '../common/domain.errors.js';

/** The errors of actor execution settings, each with its reason. */

/** -32602 on `spec.model.baseUrl`: `description` says why the endpoint is not admitted. */
export function modelEndpointNotAllowed(description: string): ValidationError {
  return new ValidationError([{ field: 'spec.model.baseUrl', description }], 'MODEL_ENDPOINT_NOT_ALLOWED');
}
