import { useEffect, useSyncExternalStore } from 'react';
import { Box, Text, render, useApp, useInput, useWindowSize } from 'ink';
import { safeLine, safeText } from '../safe-text.js';
import type { Style } from '../style.js';
import type { SignalSource } from '../sigint.js';
import { markdownRenderer, rowsOf, type MarkdownRenderer } from '../terminal.js';
import { COMMANDS, ChatController, type ChatSetup } from './controller.js';
import { Dialog } from './dialog.js';
import { createCompleter, type Completer } from './input/complete.js';
import { InputHistory } from './input/history.js';
import { PromptInput } from './input/prompt-input.js';
import { StatusLine } from './status-line.js';
import { Transcript } from './transcript.js';
import { TranscriptPane, Waiting } from './transcript-view.js';

/**
 * The interactive chat on ink: the transcript, a spinner while waiting, the prompt or the dialog that
 * has the keyboard, and the status line at the bottom.
 */
export function ChatApp({
  controller,
  style,
  history,
  complete,
}: {
  controller: ChatController;
  style: Style;
  history: InputHistory;
  complete?: Completer;
}) {
  const view = useSyncExternalStore(controller.subscribe, controller.view);
  const { columns } = useWindowSize();
  const { exit } = useApp();
  const asking = view.asking;

  useInput((input, key) => {
    if (key.ctrl && input === 'o') controller.transcript.toggleExpanded();
    // Otherwise the input has Ctrl-C (it clears what is typed first).
    else if (key.ctrl && input === 'c' && asking) controller.interrupt();
  });

  useEffect(() => {
    if (view.phase === 'done') exit();
  }, [view.phase, exit]);

  // The live transcript leaves room for the dialog, or the spinner and the input's box, and the status line.
  const dialogRows = asking
    ? rowsOf(`${asking.spec.title}\n${asking.spec.body}`, Math.max(1, columns - 4)) + asking.spec.choices.length + 6
    : 0;
  return (
    <Box flexDirection="column">
      <TranscriptPane transcript={controller.transcript} style={style} reserve={asking ? dialogRows + 2 : 8} />
      {view.waiting && !asking ? <Waiting text={view.waiting} style={style} /> : null}
      {view.queued.length > 0 && !asking ? (
        <Text>{style.dim(`queued: ${view.queued.map((q) => safeLine(q)).join(' · ')}`)}</Text>
      ) : null}
      {asking ? (
        <Dialog
          key={asking.id}
          title={asking.spec.title}
          body={asking.spec.body}
          choices={asking.spec.choices}
          askReason={asking.spec.askReason}
          style={style}
          onAnswer={asking.answer}
          onEdit={asking.onEdit}
        />
      ) : view.phase !== 'done' ? (
        <PromptInput
          active
          onSubmit={(text) => controller.submit(text)}
          onInterrupt={() => controller.interrupt()}
          onExit={() => controller.leave()}
          history={history}
          complete={complete}
          placeholder={view.phase === 'turn' ? 'sent when the answer is done' : 'a message, or /help'}
        />
      ) : null}
      <StatusLine info={view.status} style={style} columns={columns} />
    </Box>
  );
}

export interface InteractiveSetup extends Omit<ChatSetup, 'transcript'> {
  /** The keyboard. */
  input: NodeJS.ReadStream;
  /** Where SIGINT arrives (a Ctrl-C in raw mode is a key, but a signal may still come). */
  signals: SignalSource;
}

/** Runs the interactive chat on the terminal of `io.err` until the person leaves; its exit code. */
export async function runInteractiveChat(setup: InteractiveSetup): Promise<number> {
  const style = setup.io.errStyle;
  // The Markdown renderer loads after the first frame, while the person reads it (most of the bundle's size:
  // a syntax highlighter); a turn waits for it. Should it fail to load, answers are shown as their plain text.
  let markdown: MarkdownRenderer | undefined;
  const markdownLoaded = import('./markdown-modules.js')
    .then(async (modules) => {
      markdown = await markdownRenderer(style, modules);
    })
    .catch(() => undefined);
  const rendered: MarkdownRenderer = (text, width) => (markdown ? markdown(text, width) : safeText(text).trimEnd());
  const transcript = new Transcript(style, rendered, setup.io.err.columns || 80);
  const controller = new ChatController({ ...setup, transcript, ready: markdownLoaded });
  const history = InputHistory.open({ env: setup.io.env });
  const complete = createCompleter({ commands: COMMANDS, root: setup.tools?.workspace ?? process.cwd() });
  const app = <ChatApp controller={controller} style={style} history={history} complete={complete} />;
  const instance = render(app, {
    stdout: setup.io.err,
    stderr: setup.io.err,
    stdin: setup.input,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  const onSignal = (): void => controller.interrupt();
  setup.signals.on('SIGINT', onSignal);
  try {
    await controller.start();
    return await controller.done;
  } finally {
    setup.signals.off('SIGINT', onSignal);
    instance.unmount();
    await instance.waitUntilExit().catch(() => undefined);
  }
}
