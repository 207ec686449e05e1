// What a span may say of the conversation. By default nothing a person or a model wrote: no prompt, answer,
// system prompt, tool argument or tool result. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (the
// variable the GenAI instrumentations read) records them as the GenAI conventions' attributes; credentials
// never, whatever the setting: any value under a key a log line would redact is replaced.
import { SECRET_KEYS } from '../common/logging/pino.js';

export const CAPTURE_CONTENT_VARIABLE = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

/** Longest content attribute recorded, in characters; longer text is cut and marked. */
export const MAX_CONTENT_CHARS = 16_384;

const SECRET = new Set(SECRET_KEYS.map((k) => k.toLowerCase()));

/** Whether content is recorded: the variable says `true` (or a GenAI instrumentation's span mode). */
export function captureContent(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[CAPTURE_CONTENT_VARIABLE]?.trim().toLowerCase();
  return value === 'true' || value === 'span_only' || value === 'span_and_event';
}

/** A value as a content attribute: JSON (a string as it is), secrets replaced, at most MAX_CONTENT_CHARS. */
export function contentAttribute(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : ((JSON.stringify(value, (key, v: unknown) =>
          key !== '' && SECRET.has(key.toLowerCase()) ? '[redacted]' : v,
        ) as string | undefined) ?? '');
  return text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…[truncated]` : text;
}
