import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BindToolsInput } from '@langchain/core/language_models/chat_models';
import { BaseChatModel, type BaseChatModelCallOptions } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { interrupt } from '@langchain/langgraph';
import {
  nextReply,
  plainMessages,
  type ScenarioMessage,
  type ScenarioReply,
} from '../fixtures/orchestrator-scenario.mjs';

/** What a model call was given, one `role: text` line per message. */
function transcript(messages: BaseMessage[]): string[] {
  return messages.map((m) => `${m.type}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
}

/** Why `signal` aborted, as an Error (an abort reason may be any value). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
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
          if (signal?.aborted) reject(abortReason(signal));
          signal?.addEventListener('abort', () => reject(abortReason(signal)), { once: true });
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

  override _streamResponseChunks(): AsyncGenerator<ChatGenerationChunk> {
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

interface ToolCallingCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

/** The name of a tool as `bindTools` was given it (an OpenAI-style function tool, or anything with a name). */
function toolName(tool: BindToolsInput): string {
  const value = tool as { function?: { name?: unknown }; name?: unknown };
  const name = value.function?.name ?? value.name;
  return typeof name === 'string' ? name : '?';
}

/**
 * A deterministic tool-calling model: its answer is `reply(messages)` (the orchestrator scenario of
 * test/fixtures/orchestrator-scenario.mjs unless given), so it answers the same across resumes and
 * restarts. Text streams a word at a time; tool calls come as AIMessage `tool_calls`. Records every
 * call: the messages as the scenario sees them and the names of the tools it was bound with.
 * `tokensPerCall`: reported as usage_metadata.total_tokens (else no usage is reported).
 */
export class ScenarioChatModel extends BaseChatModel<ToolCallingCallOptions> {
  readonly calls: { messages: ScenarioMessage[]; tools: string[] }[] = [];

  constructor(
    private readonly options: {
      reply?: (messages: ScenarioMessage[]) => ScenarioReply;
      tokensPerCall?: number;
      /** The id every answer carries (an endpoint that repeats its ids); none by default. */
      messageId?: string;
    } = {},
  ) {
    super({});
  }

  _llmType(): string {
    return 'scenario';
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<ToolCallingCallOptions>,
  ): Runnable<Parameters<BaseChatModel['invoke']>[0], AIMessageChunk, ToolCallingCallOptions> {
    return this.withConfig({ ...kwargs, tools });
  }

  /** What the model saw in its `n`th call (from 0), one line per message as `role: content`. */
  transcript(n: number): string[] {
    return this.calls[n].messages.map((m) => `${m.role}: ${m.content}`);
  }

  private answer(messages: BaseMessage[], options: this['ParsedCallOptions']): AIMessageChunk {
    const plain = plainMessages(messages);
    this.calls.push({ messages: plain, tools: (options.tools ?? []).map(toolName) });
    const reply = (this.options.reply ?? nextReply)(plain);
    const tokens = this.options.tokensPerCall;
    return new AIMessageChunk({
      ...(this.options.messageId ? { id: this.options.messageId } : {}),
      content: reply.content,
      tool_call_chunks: reply.toolCalls.map((call, index) => ({
        type: 'tool_call_chunk' as const,
        id: call.id,
        name: call.name,
        args: JSON.stringify(call.args),
        index,
      })),
      ...(tokens ? { usage_metadata: { input_tokens: tokens - 1, output_tokens: 1, total_tokens: tokens } } : {}),
    });
  }

  _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const chunk = this.answer(messages, options);
    const message = new AIMessage({
      ...(this.options.messageId ? { id: this.options.messageId } : {}),
      content: chunk.content,
      tool_calls: chunk.tool_calls,
      usage_metadata: chunk.usage_metadata,
    });
    return Promise.resolve({
      generations: [{ message, text: typeof chunk.content === 'string' ? chunk.content : '' }],
    });
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const whole = this.answer(messages, options);
    const text = typeof whole.content === 'string' ? whole.content : '';
    for (const token of text.match(/\S+\s*|\s+/g) ?? []) {
      const chunk = new ChatGenerationChunk({
        message: new AIMessageChunk({ content: token, ...(whole.id ? { id: whole.id } : {}) }),
        text: token,
      });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
    if ((whole.tool_call_chunks?.length ?? 0) > 0 || whole.usage_metadata) {
      yield new ChatGenerationChunk({
        message: new AIMessageChunk({
          ...(whole.id ? { id: whole.id } : {}),
          content: '',
          tool_call_chunks: whole.tool_call_chunks,
          usage_metadata: whole.usage_metadata,
        }),
        text: '',
      });
    }
  }
}
