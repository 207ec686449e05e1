/** The LangGraph server could not answer a read (`assemble`): unreachable, or an HTTP error. */
export class LangGraphUnavailableError extends Error {
  override readonly name = 'LangGraphUnavailableError';
}
