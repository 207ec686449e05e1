import { useState } from 'react';
import { Text, useInput } from 'ink';
import { safeLine } from '../safe-text.js';

/** Sent texts, for Up and Down. */
export interface InputHistory {
  add(text: string): void;
  previous(draft: string): string | undefined;
  next(): string | undefined;
}

export interface PromptInputProps {
  active: boolean;
  onSubmit(text: string): void;
  onInterrupt(): void;
  onExit(): void;
  history: InputHistory;
  prompt?: string;
  placeholder?: string;
}

/** A one-line prompt: typing, Backspace, Up and Down through the history, Enter sends. */
export function PromptInput(props: PromptInputProps) {
  const [text, setText] = useState('');
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') {
        if (text === '') props.onInterrupt();
        else setText('');
        return;
      }
      if (key.ctrl && input === 'd') {
        if (text === '') props.onExit();
        return;
      }
      // Keys that came in one chunk (typed fast, pasted) arrive as one input: a line break in it sends.
      const end = key.return ? 0 : input.search(/[\r\n]/);
      if (key.return || end >= 0) {
        const line = text + (end > 0 ? safeLine(input.slice(0, end)) : '');
        if (line.trim() === '') return;
        props.history.add(line);
        setText('');
        props.onSubmit(line);
        return;
      }
      if (key.upArrow) return setText(props.history.previous(text) ?? text);
      if (key.downArrow) return setText(props.history.next() ?? text);
      if (key.backspace || key.delete) return setText([...text].slice(0, -1).join(''));
      if (!key.ctrl && !key.meta && input) setText(text + safeLine(input));
    },
    { isActive: props.active },
  );
  const prompt = props.prompt ?? '› ';
  return (
    <Text dimColor={!props.active}>
      {prompt}
      {text || (props.active ? '' : (props.placeholder ?? ''))}
      {props.active ? '▏' : ''}
    </Text>
  );
}

/** History kept for this run only. */
export class MemoryHistory implements InputHistory {
  private readonly entries: string[] = [];
  private index = 0;

  add(text: string): void {
    this.entries.push(text);
    this.index = this.entries.length;
  }

  previous(): string | undefined {
    if (this.index === 0) return undefined;
    this.index -= 1;
    return this.entries[this.index];
  }

  next(): string | undefined {
    if (this.index >= this.entries.length) return undefined;
    this.index += 1;
    return this.entries[this.index] ?? '';
  }
}
