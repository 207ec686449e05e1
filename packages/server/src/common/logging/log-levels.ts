/** The levels LOG_LEVEL accepts (kept apart from the logger so that reading the configuration loads no logger). */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
