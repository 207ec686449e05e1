// Attribute and span names the server's telemetry uses (docs/operations.md, "Traces"): the OpenTelemetry
// semantic conventions' names where one exists (RPC, GenAI, errors), else our own under `cleveragents.`.
// The GenAI and JSON-RPC names are still "development" in the conventions, so they are written out here, as
// the conventions advise, rather than imported from the incubating entry point.

// JSON-RPC calls (semantic conventions, RPC spans).
export const RPC_SYSTEM = 'rpc.system';
export const RPC_METHOD = 'rpc.method';
export const RPC_JSONRPC_VERSION = 'rpc.jsonrpc.version';
export const RPC_JSONRPC_REQUEST_ID = 'rpc.jsonrpc.request_id';
export const RPC_JSONRPC_ERROR_CODE = 'rpc.jsonrpc.error_code';
export const RPC_JSONRPC_ERROR_MESSAGE = 'rpc.jsonrpc.error_message';
export const ERROR_TYPE = 'error.type';

// Generative AI (semantic conventions, GenAI agent, model and tool spans).
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
export const GEN_AI_AGENT_DESCRIPTION = 'gen_ai.agent.description';
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
export const GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_TOKEN_TYPE = 'gen_ai.token.type';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** Recorded only with content capture on (`captureContent()`). */
export const GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
export const GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';
export const GEN_AI_SYSTEM_INSTRUCTIONS = 'gen_ai.system_instructions';
export const GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';

// The platform's own.
export const CA_A2A_VERSION = 'cleveragents.a2a.version';
export const CA_TRANSPORT = 'cleveragents.transport';
export const CA_NAMESPACE = 'cleveragents.namespace';
export const CA_PRINCIPAL = 'cleveragents.principal';
export const CA_REQUEST_ID = 'cleveragents.request_id';
export const CA_ERROR_REASON = 'cleveragents.error.reason';
export const CA_SESSION = 'cleveragents.session';
export const CA_TASK_ID = 'cleveragents.task.id';
export const CA_ACTOR = 'cleveragents.actor';
export const CA_PROFILE = 'cleveragents.profile';

// Links: why a span points at another (`cleveragents.link` on the link).
export const CA_LINK = 'cleveragents.link';
/** A take-over's link to the run it takes over. */
export const LINK_TAKEN_OVER = 'taken_over';
/** A gate's wait's link to the call (or timeout) that answered it. */
export const LINK_ANSWERED_BY = 'answered_by';

// Take-overs of a task's run left by a replica that died or a server that stopped.
export const CA_BACKEND = 'cleveragents.backend';
export const CA_PREVIOUS_OWNER = 'cleveragents.take_over.previous_replica';
export const CA_REPLICA = 'cleveragents.replica';
export const CA_TAKE_OVER_OUTCOME = 'cleveragents.take_over.outcome';

// Gates: an approval a turn asked, waited for until answered or ended.
export const CA_APPROVAL_ID = 'cleveragents.approval.id';
export const CA_APPROVAL_KIND = 'cleveragents.approval.kind';
export const CA_APPROVAL_DECISION = 'cleveragents.approval.decision';
export const CA_APPROVAL_ANSWERED_BY = 'cleveragents.approval.answered_by';
export const CA_APPROVAL_WAIT_SECONDS = 'cleveragents.approval.wait_seconds';

// Database statements retried while the database is away (a span event each, never the statement's values).
export const DB_RETRY_EVENT = 'cleveragents.db.retry';
export const CA_DB_OPERATION = 'cleveragents.db.operation';
export const CA_DB_RETRY_ATTEMPT = 'cleveragents.db.retry.attempt';
export const CA_DB_RETRY_DELAY_MS = 'cleveragents.db.retry.delay_ms';
/** `read` or `write`. */
export const CA_DB_RETRY_KIND = 'cleveragents.db.retry.kind';

// Outbound calls: HTTP client and peer names (semantic conventions, stable).
export const SERVER_ADDRESS = 'server.address';
export const SERVER_PORT = 'server.port';
export const URL_SCHEME = 'url.scheme';
export const HTTP_REQUEST_METHOD = 'http.request.method';
export const HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const HTTP_REQUEST_RESEND_COUNT = 'http.request.resend_count';

// Outbound calls: the platform's own. Values a remote peer chose are bounded labels (telemetry/outbound.ts).
/** How a remote invocation ended for the turn: completed, input-required, rejected, canceled or failed. */
export const CA_OUTCOME = 'cleveragents.outcome';
export const CA_LANGGRAPH_THREAD_ID = 'cleveragents.langgraph.thread_id';
export const CA_LANGGRAPH_RUN_ID = 'cleveragents.langgraph.run_id';
/** What the invocation did with its run: `create` (a new run), `continue` (a paused one), `join` (a known one). */
export const CA_LANGGRAPH_OPERATION = 'cleveragents.langgraph.operation';
export const CA_A2A_REMOTE_TASK_ID = 'cleveragents.a2a.remote_task.id';
export const CA_A2A_REMOTE_TASK_STATE = 'cleveragents.a2a.remote_task.state';
/** The agent card's binding the SDK client chose: JSONRPC or HTTP+JSON. */
export const CA_A2A_PROTOCOL_BINDING = 'cleveragents.a2a.protocol_binding';
/** The event a webhook delivery carries: task, message, status-update, artifact-update, or webhook. */
export const CA_WEBHOOK_EVENT = 'cleveragents.webhook.event';
/** A span event: the invocation followed its remote run or task again after its stream ended early. */
export const CA_REJOIN_EVENT = 'cleveragents.rejoin';
export const CA_ATTEMPT = 'cleveragents.attempt';

// Turns, model calls and tool calls (turn/, execution/orchestrator/telemetry.ts); CA_BACKEND above.
export const CA_TURN_MODE = 'cleveragents.turn.mode';
/** How a turn rested: completed, failed, input-required, rejected, canceled, or detached (let go at shutdown). */
export const CA_TURN_STATE = 'cleveragents.turn.state';
/** How long the task waited for input (a client's answer, an approval) before this turn took it up, seconds. */
export const CA_TURN_WAITED_SECONDS = 'cleveragents.turn.waited_seconds';
/** How a tool call ended in this turn: ok, error, rejected, or awaiting_client (handed to the client). */
export const CA_TOOL_OUTCOME = 'cleveragents.tool.outcome';
/** Where a tool call runs: server (the graph itself), client (a client-request) or agent (an A2A sub-agent). */
export const CA_TOOL_RUNS_ON = 'cleveragents.tool.runs_on';
