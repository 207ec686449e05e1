import type { StreamResponse, TaskState } from '@a2a-js/sdk';

/** The text of a part, '' for any other kind. */
export function partText(part: { content?: { $case: string; value: unknown } } | undefined): string {
  return part?.content?.$case === 'text' ? (part.content.value as string) : '';
}

/** The answer artifact's text as a client assembles it from artifact updates (append, or replace). */
export function assembledAnswer(events: readonly StreamResponse[]): string {
  let answer = '';
  for (const e of events) {
    if (e.payload?.$case !== 'artifactUpdate') continue;
    const chunk = e.payload.value.artifact?.parts.map((p) => partText(p)).join('') ?? '';
    answer = e.payload.value.append ? answer + chunk : chunk;
  }
  return answer;
}

/** The task state an event carries (a status update or a task), else undefined. */
export function stateOf(event: StreamResponse | undefined): TaskState | undefined {
  const p = event?.payload;
  if (p?.$case === 'statusUpdate') return p.value.status?.state;
  if (p?.$case === 'task') return p.value.status?.state;
  return undefined;
}

/** Every event of a stream, in order. */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of stream) out.push(event);
  return out;
}
