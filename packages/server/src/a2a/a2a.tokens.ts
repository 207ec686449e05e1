/** DI token for the SDK's A2ARequestHandler (a DefaultRequestHandler wired with our stores). */
export const A2A_REQUEST_HANDLER = Symbol('A2A_REQUEST_HANDLER');
