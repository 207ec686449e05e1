import { useSyncExternalStore } from 'react';
import { Box, Static, Text, useAnimation, useWindowSize } from 'ink';
import { planChecklist } from '../render.js';
import type { Style } from '../style.js';
import { toolText, type Line, type Transcript, type TranscriptView } from './transcript.js';

/** The finished transcript: each line written once, above everything live. */
export function Finished({ lines }: { lines: readonly Line[] }) {
  return (
    <Static items={[...lines]}>
      {(line) => (
        <Box key={line.id} marginBottom={line.gap ? 1 : 0}>
          <Text>{line.text}</Text>
        </Box>
      )}
    </Static>
  );
}

/** `line` broken into rows of at most `width` characters, at spaces where it can be. */
function wrapLine(line: string, width: number): string[] {
  const rows: string[] = [];
  let rest = [...line];
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > 0 ? space : width;
    rows.push(rest.slice(0, cut).join(''));
    rest = rest.slice(space > 0 ? cut + 1 : cut);
  }
  rows.push(rest.join(''));
  return rows;
}

/**
 * The last `rows` rows `text` takes at `columns`, wrapped here (and drawn unwrapped): the live answer never
 * grows taller than the screen (a frame taller than it is redrawn from its top, which would leave copies
 * in the scrollback).
 */
export function lastRows(text: string, columns: number, rows: number): { shown: string; hidden: number } {
  const width = Math.max(1, columns);
  const all = text.split('\n').flatMap((line) => wrapLine(line, width));
  const hidden = Math.max(0, all.length - rows);
  return { shown: all.slice(hidden).join('\n'), hidden };
}

function rowsIn(text: string): number {
  return text === '' ? 0 : text.split('\n').length;
}

/** What is live in a turn: the plan updated in place, the tools of the moment, the answer's unfinished block. */
export function Live({
  view,
  style,
  columns,
  rows,
}: {
  view: TranscriptView;
  style: Style;
  columns: number;
  /** The rows the live part may take. */
  rows: number;
}) {
  const plan = view.plan ? planChecklist(view.plan, style) : '';
  const tools = view.tools.map((tool) => toolText(tool, style, view.expanded)).join('\n');
  const left = Math.max(2, rows - rowsIn(plan) - rowsIn(tools));
  const tail = view.tail.replace(/\n+$/, '');
  const { shown, hidden } = lastRows(tail, columns, tailRows(left, tail, columns));
  return (
    <Box flexDirection="column">
      {plan ? <Text>{plan}</Text> : null}
      {tools ? <Text>{tools}</Text> : null}
      {hidden > 0 ? <Text>{style.dim(`… ${hidden} rows above, written when the paragraph ends`)}</Text> : null}
      {shown ? <Text wrap="truncate">{shown}</Text> : null}
    </Box>
  );
}

/** The rows the tail may take: one less when a line says how many are hidden. */
function tailRows(left: number, tail: string, columns: number): number {
  return lastRows(tail, columns, left).hidden > 0 ? left - 1 : left;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A spinner and what is awaited. */
export function Waiting({ text, style }: { text: string; style: Style }) {
  const { frame } = useAnimation({ interval: 80 });
  return (
    <Text>
      {style.cyan(FRAMES[frame % FRAMES.length])} {style.dim(text)}
    </Text>
  );
}

/** The transcript, finished and live, as it stands; `reserve` rows are kept for what is below it. */
export function TranscriptPane({
  transcript,
  style,
  reserve,
}: {
  transcript: Transcript;
  style: Style;
  reserve: number;
}) {
  const view = useSyncExternalStore(transcript.subscribe, transcript.view);
  const { columns, rows } = useWindowSize();
  // Answers are rendered at the width they are written at.
  transcript.width = columns;
  return (
    <>
      <Finished lines={view.lines} />
      <Live view={view} style={style} columns={columns} rows={Math.max(3, rows - reserve)} />
    </>
  );
}
