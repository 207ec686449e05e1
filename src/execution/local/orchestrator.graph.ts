import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { END, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { fitContext } from './context-window.js';

/** The node that asks the model for the next answer. */
export const AGENT_NODE = 'agent';

/**
 * What a run of the graph needs besides its state. Given per run (LangGraph's `context`), so it is
 * never written into a checkpoint.
 */
export interface OrchestratorContext {
  model: BaseChatModel;
  systemPrompt: string;
  /** The prompt-side token budget of one model call. */
  contextTokens: number;
}

function orchestratorContext(config: LangGraphRunnableConfig): OrchestratorContext {
  const context = config.context as Partial<OrchestratorContext> | undefined;
  if (!context?.model || typeof context.systemPrompt !== 'string' || typeof context.contextTokens !== 'number') {
    throw new Error('The orchestrator graph runs only with an OrchestratorContext');
  }
  return context as OrchestratorContext;
}

/**
 * The `local` orchestrator over a messages state: for now START → agent → END, the agent answering
 * the conversation (trimmed to the budget) under the actor's system prompt. Plan, approval gate and
 * tool steps become further nodes between START and END. The model is called with the node's own
 * config, so the run's callbacks (token streaming) and abort signal reach it.
 */
export function buildOrchestratorGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode(AGENT_NODE, async (state, config: LangGraphRunnableConfig) => {
      const { model, systemPrompt, contextTokens } = orchestratorContext(config);
      const window = fitContext(systemPrompt, state.messages, contextTokens);
      const answer = await model.invoke(window.messages, config);
      return { messages: [answer] };
    })
    .addEdge(START, AGENT_NODE)
    .addEdge(AGENT_NODE, END)
    .compile({ checkpointer });
}

export type OrchestratorGraph = ReturnType<typeof buildOrchestratorGraph>;
