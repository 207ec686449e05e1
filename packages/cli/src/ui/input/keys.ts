/**
 * The keys that only edit the buffer (move, delete, insert), as a plain mapping from ink's key to
 * the edited buffer. Keys that reach beyond it (Enter, Tab, Esc, Up and Down, Ctrl-C and Ctrl-D)
 * are the component's.
 */
import type { Key } from 'ink';
import * as edit from './editor.js';
import { cleanInput, type Editor } from './editor.js';

type Action = (editor: Editor) => Editor;

const CTRL_KEYS: Partial<Record<string, Action>> = {
  a: edit.home,
  e: edit.end,
  b: edit.left,
  f: edit.right,
  u: edit.killToLineStart,
  k: edit.killToLineEnd,
  w: edit.killWordBack,
  j: (editor) => edit.insert(editor, '\n'),
};

const META_KEYS: Partial<Record<string, Action>> = {
  b: edit.wordLeft,
  f: edit.wordRight,
};

/** The buffer after `input`/`key`, or undefined when the key changes nothing here. */
export function editingKey(editor: Editor, input: string, key: Key): Editor | undefined {
  const wordWise = key.ctrl || key.meta;
  if (key.leftArrow) return wordWise ? edit.wordLeft(editor) : edit.left(editor);
  if (key.rightArrow) return wordWise ? edit.wordRight(editor) : edit.right(editor);
  if (key.home) return edit.home(editor);
  if (key.end) return edit.end(editor);
  if (key.backspace) return key.meta ? edit.killWordLeft(editor) : edit.backspace(editor);
  if (key.delete) return edit.deleteForward(editor);
  // Other chords are not text: Ctrl or Alt with a key bound to nothing does nothing.
  if (key.ctrl) return CTRL_KEYS[input]?.(editor);
  if (key.meta) return META_KEYS[input]?.(editor);
  if (key.pageUp || key.pageDown) return undefined;
  // Typed text, or a paste from a terminal without bracketed paste: its line breaks are inserted, never sent.
  const clean = cleanInput(input);
  return clean === '' ? undefined : edit.insert(editor, clean);
}
