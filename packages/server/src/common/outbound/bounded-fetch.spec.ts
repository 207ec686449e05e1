import { describe, expect, it } from '@jest/globals';
import { boundedFetch, ResponseTooLargeError } from './bounded-fetch.js';

/** A fetch that answers `chunks` with these headers, whatever is asked. */
const answering =
  (chunks: string[], headers: Record<string, string>): typeof fetch =>
  () =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
            controller.close();
          },
        }),
        { headers },
      ),
    );

const read = async (chunks: string[], headers: Record<string, string>, limit: number) =>
  (await boundedFetch(answering(chunks, headers), limit)('http://agent.example/')).text();

describe('boundedFetch', () => {
  it('reads a body up to the limit, and errors past it naming the limit', async () => {
    const json = { 'content-type': 'application/json' };
    await expect(read(['{"a":', '"12345"}'], json, 13)).resolves.toBe('{"a":"12345"}');
    const error = await read(['{"a":', '"123456"}'], json, 13).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toBe('the response is larger than 13 bytes');
  });

  it('refuses a declared content-length past the limit before reading', async () => {
    const fetchBounded = boundedFetch(answering(['x'.repeat(20)], { 'content-length': '20' }), 10);
    await expect(fetchBounded('http://agent.example/')).rejects.toThrow('the response is larger than 10 bytes');
  });

  it('bounds each server-sent event, not the stream: LF, CRLF and CR blank lines end an event', async () => {
    const sse = { 'content-type': 'text/event-stream' };
    const event = 'data: 12345678\n\n';
    const many = [event.repeat(50), 'data: 1234\r\n\r\n', 'data: ab', 'cdefgh\r\r'];
    await expect(read(many, sse, 14)).resolves.toBe(many.join(''));
    const error = await read(['data: 1234\n', 'data: 5678\n\n'], sse, 14).catch((e: unknown) => e);
    expect((error as Error).message).toBe('the stream event is larger than 14 bytes');
  });
});
