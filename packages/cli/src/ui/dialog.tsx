import { useEffect, useState } from 'react';
import { Box, Text, useApp, useInput } from 'ink';
import { safeLine } from '../safe-text.js';
import type { Style } from '../style.js';

/**
 * A question that runs something if allowed: exactly what runs, then choices. Nothing is chosen until a
 * key picks a choice, and Enter only confirms the choice picked, so a stray Enter allows nothing; keys
 * typed in the first moment after it shows (meant for what was there before), or arriving together (a
 * paste), are not taken at all.
 */

export type DialogChoice = 'once' | 'session' | 'deny' | 'edit';

export interface Choice {
  /** The key that picks it (its number picks it too). */
  key: string;
  label: string;
  value: DialogChoice;
}

export interface DialogAnswer {
  choice: DialogChoice;
  /** Deny: why, in the person's words. */
  reason?: string;
}

export interface DialogProps {
  /** What is asked, and exactly what runs: the client's own text, every part from the agent made safe. */
  title: string;
  body: string;
  choices: readonly Choice[];
  style: Style;
  onAnswer: (answer: DialogAnswer) => void;
  /** Deny asks for a reason (a line), sent with the rejection. */
  askReason?: boolean;
  /**
   * Edit: runs with the terminal handed over (the editor's), ink suspended; resolves with why the edit
   * was not used, or undefined once it was answered.
   */
  onEdit?: () => Promise<string | undefined>;
  /** Keys typed within this many milliseconds of the dialog showing are ignored. */
  armMs?: number;
}

/** How long keys are ignored after a dialog shows: keys on their way when it appeared were not meant for it. */
export const ARM_MS = 400;

export function Dialog({ title, body, choices, style, onAnswer, askReason, onEdit, armMs = ARM_MS }: DialogProps) {
  const [armed, setArmed] = useState(armMs <= 0);
  const [picked, setPicked] = useState<number | undefined>(undefined);
  const [reason, setReason] = useState<string | undefined>(undefined);
  const [note, setNote] = useState('');
  const [editing, setEditing] = useState(false);
  const { suspendTerminal } = useApp();

  useEffect(() => {
    if (armMs <= 0) return;
    const timer = setTimeout(() => setArmed(true), armMs);
    return () => clearTimeout(timer);
  }, [armMs]);

  const edit = (): void => {
    if (!onEdit) return;
    setEditing(true);
    let failed: string | undefined;
    void suspendTerminal(async () => {
      failed = await onEdit();
    })
      .catch((err: unknown) => {
        failed = err instanceof Error ? err.message : String(err);
      })
      .finally(() => {
        setEditing(false);
        if (failed !== undefined) setNote(`Edit not used: ${safeLine(failed)}`);
      });
  };

  const confirm = (index: number): void => {
    const choice = choices[index];
    if (choice.value === 'deny' && askReason) {
      setReason('');
      setNote('');
      return;
    }
    if (choice.value === 'edit') return edit();
    onAnswer({ choice: choice.value });
  };

  useInput(
    (input, key) => {
      if (!armed || editing) return;
      if (reason !== undefined) {
        if (key.return) {
          const said = reason.trim();
          onAnswer({ choice: 'deny', ...(said ? { reason: said } : {}) });
        } else if (key.escape) setReason(undefined);
        else if (key.backspace || key.delete) setReason(reason.slice(0, -1));
        else if (!key.ctrl && !key.meta && input) setReason(reason + safeLine(input));
        return;
      }
      // Keys that came together (a paste, keys typed ahead) are no choice: a person picks one key at a time.
      if ([...input].length > 1) {
        setNote('Keys that came together are not taken: pick with one key.');
        return;
      }
      if (key.return) {
        if (picked === undefined) setNote('Pick a choice first (its key, or ↑ ↓), then Enter.');
        else confirm(picked);
        return;
      }
      if (key.escape) return setPicked(undefined);
      if (key.downArrow) return setPicked(picked === undefined ? 0 : (picked + 1) % choices.length);
      if (key.upArrow) {
        return setPicked(picked === undefined ? choices.length - 1 : (picked + choices.length - 1) % choices.length);
      }
      const at = choices.findIndex((c, i) => c.key === input.toLowerCase() || String(i + 1) === input);
      if (at >= 0) {
        setPicked(at);
        setNote('');
      }
    },
    { isActive: true },
  );

  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text>{style.bold(title)}</Text>
      {body ? <Text>{body}</Text> : null}
      <Box flexDirection="column" marginTop={1}>
        {choices.map((choice, i) => (
          <Text key={choice.value} inverse={i === picked}>
            {i === picked ? '›' : ' '} {i + 1}. [{choice.key}] {choice.label}
          </Text>
        ))}
      </Box>
      {reason !== undefined ? (
        <Text>
          Reason (optional): {reason}
          {style.dim('▏ Enter denies · Esc goes back')}
        </Text>
      ) : (
        <Text>
          {style.dim(
            editing
              ? 'In the editor…'
              : picked === undefined
                ? 'Pick with a key or ↑ ↓; Enter confirms the choice picked.'
                : `Enter: ${choices[picked].label.toLowerCase()} · Esc: pick again`,
          )}
        </Text>
      )}
      {note ? <Text>{style.yellow(note)}</Text> : null}
    </Box>
  );
}
