import { useId, useState, type ChangeEvent, type SyntheticEvent, type KeyboardEvent, type ReactNode } from 'react';
import { shown } from './transcript';
import type { Attachment } from './use-conversation';

/** The most a message's attachments may weigh together (they travel in the message, base64). */
export const MAX_ATTACHMENT_BYTES = 1024 * 1024;

/** The message box: text, files attached as parts, Send (Ctrl+Enter too). */
export function Composer({
  disabled,
  onSend,
}: {
  disabled: boolean;
  onSend: (text: string, files: Attachment[]) => void;
}): ReactNode {
  const [text, setText] = useState('');
  const [files, setFiles] = useState<Attachment[]>([]);
  const [problem, setProblem] = useState<string>();
  const id = useId();

  const attach = async (event: ChangeEvent<HTMLInputElement>): Promise<void> => {
    const chosen = Array.from(event.target.files ?? []);
    event.target.value = '';
    const total = [...files.map((f) => f.size), ...chosen.map((f) => f.size)].reduce((a, b) => a + b, 0);
    if (total > MAX_ATTACHMENT_BYTES) {
      setProblem(
        `Not attached: attachments may weigh ${MAX_ATTACHMENT_BYTES / 1024} KB together, and these weigh ${Math.ceil(total / 1024)} KB.`,
      );
      return;
    }
    setProblem(undefined);
    const read = await Promise.all(
      chosen.map(async (file) => ({
        name: file.name,
        mediaType: file.type || 'application/octet-stream',
        size: file.size,
        bytes: new Uint8Array(await file.arrayBuffer()),
      })),
    );
    setFiles((list) => [...list, ...read]);
  };

  const submit = (event?: SyntheticEvent): void => {
    event?.preventDefault();
    if (disabled || (text.trim() === '' && files.length === 0)) return;
    onSend(text, files);
    setText('');
    setFiles([]);
    setProblem(undefined);
  };

  const keys = (event: KeyboardEvent<HTMLTextAreaElement>): void => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) submit();
  };

  return (
    <form className="chat-composer" onSubmit={submit}>
      <div className="field">
        <label htmlFor={`${id}-text`}>Message</label>
        <textarea
          id={`${id}-text`}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={keys}
          aria-describedby={`${id}-hint`}
        />
        <span id={`${id}-hint`} className="muted">
          Ctrl+Enter sends.
        </span>
      </div>
      {files.length > 0 && (
        <ul className="plain chat-files" aria-label="Attached files">
          {files.map((file, index) => (
            <li key={index} className="row">
              <span>
                {shown(file.name)} <span className="muted">({file.size} B)</span>
              </span>
              <button
                type="button"
                className="quiet"
                onClick={() => setFiles((list) => list.filter((_, i) => i !== index))}
              >
                Remove {shown(file.name)}
              </button>
            </li>
          ))}
        </ul>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <div className="row">
        <button type="submit" disabled={disabled}>
          Send
        </button>
        <label htmlFor={`${id}-files`}>Attach files</label>
        <input id={`${id}-files`} type="file" multiple onChange={(event) => void attach(event)} />
      </div>
    </form>
  );
}
