import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { interrupt } from '@langchain/langgraph';

/** What a model call was given, one `role: text` line per message. */
function transcript(messages: BaseMessage[]): string[] {
  return messages.map(
    (m) => `${m.getType()}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
  );
}

/** FakeListChatModel (answers in turn, streamed a character at a time) that records what it was asked. */
export class RecordingListChatModel extends FakeListChatModel {
  readonly calls: string[][] = [];

  constructor(responses: string[]) {
    super({ responses });
  }

  override async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    this.calls.push(transcript(messages));
    return super._generate(messages, options, runManager);
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.calls.push(transcript(messages));
    yield* super._streamResponseChunks(messages, options, runManager);
  }
}

/**
 * A model that streams its first `stallAfter` tokens, then stalls until `release()` or until the
 * call's signal aborts (as an HTTP client would) — the model of a slow or cut-off answer. `stalled`
 * resolves when it stalls.
 */
export class StallingChatModel extends FakeStreamingChatModel {
  readonly calls: string[][] = [];
  readonly stalled: Promise<void>;
  private markStalled!: () => void;
  private readonly released: Promise<void>;
  /** Lets a stalled answer go on. */
  release!: () => void;

  constructor(
    private readonly tokens: string[],
    private readonly stallAfter: number,
  ) {
    super({});
    this.stalled = new Promise((resolve) => (this.markStalled = resolve));
    this.released = new Promise((resolve) => (this.release = resolve));
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.calls.push(transcript(messages));
    for (const [i, token] of this.tokens.entries()) {
      if (i === this.stallAfter) {
        this.markStalled();
        await new Promise<void>((resolve, reject) => {
          void this.released.then(resolve);
          const signal = options.signal;
          if (signal?.aborted) reject(signal.reason);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
      const chunk = new ChatGenerationChunk({ message: new AIMessageChunk({ content: token }), text: token });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

/** A model that must not be asked anything: recovery from a finished checkpoint never calls it. */
export class UnusableChatModel extends FakeListChatModel {
  calls = 0;

  constructor() {
    super({ responses: ['(should not be asked)'] });
  }

  override _generate(): Promise<ChatResult> {
    this.calls += 1;
    return Promise.reject(new Error('UnusableChatModel was called'));
  }

  override async *_streamResponseChunks(): AsyncGenerator<ChatGenerationChunk> {
    this.calls += 1;
    throw new Error('UnusableChatModel was called');
  }
}

/**
 * A model that asks the user before it answers: it interrupts the graph with `question` (LangGraph's
 * `interrupt`) and, once resumed, answers with what the user replied.
 */
export class AskingChatModel extends FakeStreamingChatModel {
  readonly calls: string[][] = [];

  constructor(private readonly question: Record<string, unknown>) {
    super({});
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.calls.push(transcript(messages));
    const reply: unknown = interrupt(this.question);
    const token = `You said: ${typeof reply === 'string' ? reply : JSON.stringify(reply)}`;
    const chunk = new ChatGenerationChunk({ message: new AIMessageChunk({ content: token }), text: token });
    yield chunk;
    await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
  }
}
