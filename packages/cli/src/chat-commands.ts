import type { ChatSessions } from './chat-sessions.js';
import { describeError } from './context.js';
import type { ChatConversation, ConversationHost } from './conversation-so-far.js';
import { EXIT } from './exit-codes.js';
import { planChecklist } from './render.js';
import { safeLine } from './safe-text.js';

export interface ChatCommandsHost extends ConversationHost {
  conversation: ChatConversation;
  /** `/help`'s text. */
  help: string;
  switcher: ChatSessions;
  /** Another session was picked: the chat takes it up (shows it, answers what waits); a code when it ends. */
  takeUp(): Promise<number | undefined>;
}

/** A slash command of either chat; a number when the chat should end with that code. */
export async function chatCommand(text: string, host: ChatCommandsHost): Promise<number | undefined> {
  const { client, say, style, conversation } = host;
  const [name] = text.split(/\s+/);
  const rest = text.slice(name.length).trim();
  switch (name) {
    case '/quit':
    case '/exit':
      return EXIT.OK;
    case '/help':
      say(host.help);
      return undefined;
    case '/plan':
      if (conversation.plan) say(planChecklist(conversation.plan, style));
      else if (!client.offersExtensions) say(style.yellow('/plan: this agent does not offer CleverAgents plans.'));
      else say(style.dim('No plan in this conversation yet.'));
      return undefined;
    case '/cancel':
      await cancelWaiting(host);
      return undefined;
    case '/sessions':
      return sessions(rest, host);
    case '/title':
      if (!client.offersExtensions) say(style.yellow('/title: this agent does not offer CleverAgents sessions.'));
      else await host.switcher.retitle(conversation.contextId, rest);
      return undefined;
    case '/session':
    case '/usage':
      await host.switcher.show(name, conversation.contextId);
      return undefined;
    default:
      say(`${style.red('Unknown command')} ${safeLine(name)}\n${host.help}`);
      return undefined;
  }
}

/** `/cancel`: the task left waiting, canceled; a refusal is said. */
async function cancelWaiting(host: ChatCommandsHost): Promise<void> {
  const { client, say, style, conversation } = host;
  if (!conversation.waitingTaskId) {
    say(style.dim('No task waits: a running task is canceled with Ctrl-C.'));
    return;
  }
  try {
    const task = await client.tasks.cancel({ id: conversation.waitingTaskId });
    say(`Task ${safeLine(task.id)} canceled.`);
    conversation.waitingTaskId = undefined;
    conversation.answersTask = undefined;
  } catch (err) {
    say(describeError(err, style, host.options));
  }
}

/** `/sessions`: the person's sessions, numbered; `/sessions N|ID`: goes to one and takes it up. */
async function sessions(which: string, host: ChatCommandsHost): Promise<number | undefined> {
  const { client, say, style, conversation } = host;
  if (!client.offersExtensions) {
    say(style.yellow('/sessions: this agent does not offer CleverAgents sessions.'));
    return undefined;
  }
  if (which === '') {
    await host.switcher.list(conversation.contextId);
    return undefined;
  }
  const session = await host.switcher.pick(which);
  if (!session) return undefined;
  Object.assign(conversation, {
    contextId: session.sessionId,
    plan: undefined,
    waitingTaskId: undefined,
    answersTask: undefined,
  });
  return host.takeUp();
}
