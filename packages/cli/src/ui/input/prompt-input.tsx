/**
 * The box the person writes in: several lines, the usual readline keys, history on Up and Down at
 * the buffer's edges, completion on Tab, and bracketed paste inserted whole. Keys are read through
 * ink only; what is shown passes through safeText, and what enters the buffer is cleaned first.
 */
import { Box, Text, measureElement, useInput, usePaste, useWindowSize, type DOMElement, type Key } from 'ink';
import { useEffect, useRef, useState, type RefObject } from 'react';
import { safeLine, safeText } from '../../safe-text.js';
import type { Completer, CompletionCandidate } from './complete.js';
import * as edit from './editor.js';
import { EMPTY, cleanInput, editorOf, type Editor } from './editor.js';
import type { InputHistory } from './history.js';
import { editingKey } from './keys.js';
import { TAB_WIDTH, layout, moveVertically, textWidth } from './layout.js';

export interface PromptInputProps {
  /** Keys go to the input only while active (a dialog may hold the focus). */
  active: boolean;
  /** The whole text (lines joined with \n) when the person presses Enter on a non-empty buffer. */
  onSubmit(text: string): void;
  /** Ctrl-C: the app decides (cancel a turn, leave on a second press). The input clears its buffer first if not empty and does not call this then. */
  onInterrupt(): void;
  /** Ctrl-D on an empty buffer. */
  onExit(): void;
  history: InputHistory;
  complete?: Completer;
  prompt?: string;
  placeholder?: string;
}

/** The most rows of text shown; a longer buffer scrolls with the cursor. */
export const MAX_ROWS = 12;
/** The most completion candidates listed. */
export const LIST_LIMIT = 10;

interface State {
  editor: Editor;
  candidates: CompletionCandidate[];
}

export function PromptInput(props: PromptInputProps) {
  const { active, history, complete, prompt = '› ', placeholder } = props;
  // The state lives in a ref: several keys may arrive in one read, each seeing the edit before it.
  const state = useRef<State>({ editor: EMPTY, candidates: [] });
  // Bumped by every change, so a completion that arrives after the text moved on is dropped.
  const generation = useRef(0);
  const mounted = useRef(true);
  const [, rerender] = useState(0);
  const { columns } = useWindowSize();
  // The box's own width once laid out (the app may place it in a narrower column); the terminal's until then.
  const box = useRef<DOMElement>(null);
  const inner = useInnerWidth(box);
  const width = textWidthOf(inner ?? columns - 2, prompt);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const set = (editor: Editor, candidates: CompletionCandidate[] = []): void => {
    state.current = { editor, candidates };
    generation.current += 1;
    rerender((n) => n + 1);
  };

  const startCompletion = (completer: Completer): void => {
    const asked = generation.current;
    const { text, cursor } = state.current.editor;
    completer(text, cursor).then(
      (completion) => {
        if (!mounted.current || generation.current !== asked || completion === undefined) return;
        const insert = cleanInput(completion.insert);
        const editor = {
          text: text.slice(0, completion.from) + insert + text.slice(completion.to),
          cursor: completion.from + insert.length,
        };
        set(editor, completion.candidates.length > 1 ? completion.candidates : []);
      },
      // A completer that fails completes nothing; the person can go on typing.
      () => undefined,
    );
  };

  const onKey = (input: string, key: Key): void => {
    if (key.eventType === 'release') return;
    // Keys typed faster than they are read come as one chunk ("hello\r", "src/ma\t"): its last key still acts.
    // A chunk with a line break inside is a paste from a terminal without bracketed paste, inserted whole.
    if (!key.ctrl && !key.meta && FAST_TYPED.test(input)) {
      onKey(input.slice(0, -1), key);
      return onKey(input.slice(-1), { ...key, return: input.endsWith('\r'), tab: input.endsWith('\t') });
    }
    const now = state.current.editor;
    const { text, cursor } = now;

    if (key.ctrl && input === 'c') {
      if (text === '') return props.onInterrupt();
      history.reset();
      return set(EMPTY);
    }
    if (key.ctrl && input === 'd') {
      if (text === '') return props.onExit();
      return set(edit.deleteForward(now));
    }
    if (key.return) {
      if (key.meta || key.shift || key.ctrl) return set(edit.insert(now, '\n'));
      // A line ending in a backslash goes on to the next line, as in a shell.
      if (text[cursor - 1] === '\\') return set(edit.insert(edit.backspace(now), '\n'));
      if (text.trim() === '') return;
      history.add(text);
      set(EMPTY);
      return props.onSubmit(text);
    }
    if (key.tab) {
      if (!key.shift && complete) startCompletion(complete);
      return;
    }
    if (key.escape) {
      if (state.current.candidates.length > 0) set(now);
      return;
    }
    if (key.upArrow || key.downArrow) {
      const direction = key.upArrow ? -1 : 1;
      const moved = moveVertically(text, cursor, width, direction);
      if (moved !== undefined) return set({ text, cursor: moved });
      const entry = direction < 0 ? history.previous(text) : history.next();
      // The history file may have been written by something else than this input: cleaned as typed text is.
      if (entry !== undefined) set(editorOf(cleanInput(entry)));
      return;
    }
    const edited = editingKey(now, input, key);
    if (edited) set(edited);
  };

  useInput(onKey, { isActive: active });
  usePaste(
    (pasted) => {
      const clean = cleanInput(pasted);
      if (clean !== '') set(edit.insert(state.current.editor, clean));
    },
    { isActive: active },
  );

  const { editor, candidates } = state.current;

  return (
    // The whole width it is given, whatever its text: rows are cut to the box, so the box must not follow the rows.
    <Box flexDirection="column" width="100%">
      <Box ref={box} borderStyle="round" borderDimColor={!active} flexDirection="column">
        {editor.text === '' ? (
          <Box>
            <Text>{safeLine(prompt)}</Text>
            <Placeholder text={placeholder} cursor={active} />
          </Box>
        ) : (
          <Rows editor={editor} width={width} prompt={safeLine(prompt)} cursor={active} />
        )}
      </Box>
      {candidates.length > 0 && <Candidates candidates={candidates} />}
    </Box>
  );
}

const FAST_TYPED = /^[^\r\n\t]+[\r\t]$/;

/**
 * The width inside the box's border once laid out, measured after each render of the input (a resize
 * renders it again). Only a change of width renders it again: its place on the screen, which moves
 * with every line the transcript above it streams, is not watched (watching it rendered the input
 * again on each streamed chunk, one render asking for the next, until React gave up with "Maximum
 * update depth exceeded").
 */
function useInnerWidth(box: RefObject<DOMElement | null>): number | undefined {
  const [width, setWidth] = useState<number | undefined>(undefined);
  const known = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!box.current) return;
    const measured = measureElement(box.current).clientWidth;
    if (measured > 0 && measured !== known.current) {
      known.current = measured;
      setWidth(measured);
    }
  });
  return width;
}

/** The cells a row of text gets: the box's inner width less the prompt. */
function textWidthOf(inner: number, prompt: string): number {
  return Math.max(1, inner - textWidth(safeLine(prompt)));
}

/** Buffer text as it may reach the screen: safe, tabs as spaces (a tab would move the terminal's cursor). */
function shown(text: string): string {
  return safeText(text).replace(/\t/g, ' '.repeat(TAB_WIDTH));
}

function Placeholder({ text, cursor }: { text: string | undefined; cursor: boolean }) {
  const words = safeLine(text);
  if (!cursor) return <Text dimColor>{words}</Text>;
  const first = words.slice(0, 1) || ' ';
  return (
    <Text>
      <Text inverse>{first}</Text>
      <Text dimColor>{words.slice(1)}</Text>
    </Text>
  );
}

function Rows({ editor, width, prompt, cursor }: { editor: Editor; width: number; prompt: string; cursor: boolean }) {
  const { text } = editor;
  const view = layout(text, editor.cursor, width, MAX_ROWS);
  const indent = ' '.repeat(textWidth(prompt));
  return (
    <>
      {view.hiddenAbove && <Text dimColor>{indent}↑ more above</Text>}
      {view.rows.map((row, index) => {
        const lead = row.start === 0 ? prompt : indent;
        if (!cursor || index !== view.cursorRow) {
          return (
            <Text key={row.start}>
              {lead}
              {shown(text.slice(row.start, row.end))}
            </Text>
          );
        }
        const at = editor.cursor;
        const after = at < row.end ? edit.nextBoundary(text, at) : at;
        return (
          <Text key={row.start}>
            {lead}
            {shown(text.slice(row.start, at))}
            <Text inverse>{after > at ? shown(text.slice(at, after)) || ' ' : ' '}</Text>
            {shown(text.slice(after, row.end))}
          </Text>
        );
      })}
      {view.hiddenBelow && <Text dimColor>{indent}↓ more below</Text>}
    </>
  );
}

function Candidates({ candidates }: { candidates: CompletionCandidate[] }) {
  const listed = candidates.slice(0, LIST_LIMIT);
  const more = candidates.length - listed.length;
  return (
    <Box flexDirection="column" paddingX={2}>
      {listed.map((candidate) => (
        <Text key={candidate.label}>
          {safeLine(candidate.label)}
          {candidate.help !== undefined && <Text dimColor>{`  ${safeLine(candidate.help)}`}</Text>}
        </Text>
      ))}
      {more > 0 && <Text dimColor>{`+${more} more`}</Text>}
    </Box>
  );
}
