import { ChatOpenAI } from '@langchain/openai';
import { buildOrchestratorGraph } from './graph.js';

/**
 * The orchestrator graph as a LangGraph Platform / Agent Server deployment (langgraph.json at the
 * repository root names `./dist/execution/orchestrator/platform.js:graph`). The model is an
 * OpenAI-compatible endpoint from the environment: CLEVERAGENTS_MODEL_BASE_URL, CLEVERAGENTS_MODEL and
 * CLEVERAGENTS_MODEL_API_KEY. No checkpointer: the platform brings its own. The server never imports
 * this module.
 */
export const graph = buildOrchestratorGraph({
  model: new ChatOpenAI({
    model: process.env.CLEVERAGENTS_MODEL ?? 'unset-model',
    // The client library insists on a key; an endpoint that needs none ignores it.
    apiKey: process.env.CLEVERAGENTS_MODEL_API_KEY || 'no-key',
    configuration: { baseURL: process.env.CLEVERAGENTS_MODEL_BASE_URL },
    streaming: true,
  }),
});
