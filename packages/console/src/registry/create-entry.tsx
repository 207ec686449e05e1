import { REGISTRY_KINDS, type RegistryKind } from '@cleveragents/contract';
import { useId, useState, type ReactNode } from 'react';
import { useAction } from '../lib/calls';
import { navigate } from '../lib/router';
import { useSession } from '../lib/session';
import { specText } from './conflict';
import { mayWrite } from './rights';
import { SpecEditor } from './spec-editor';

/** A spec to start from for each kind: the smallest the kind takes, to be filled in. */
const STARTERS: Record<RegistryKind, Record<string, unknown>> = {
  actor: { description: 'What this actor does', localGraph: 'orchestrator' },
  tool: {
    description: 'What the tool does, as models read it',
    inputSchema: { type: 'object', properties: {} },
    runsOn: 'server',
  },
  skill: { description: 'What the skill is for', instructions: 'How to do the work' },
  profile: { description: 'When to use this profile', gate: 'manual' },
};

/** A new entry: its kind, its name and its spec, checked as an edit is; opens the entry once created. */
export function CreateEntry({ initialKind, onCancel }: { initialKind: RegistryKind; onCancel: () => void }): ReactNode {
  const { client, namespace, role } = useSession();
  const kinds = REGISTRY_KINDS.filter((kind) => mayWrite(role, kind));
  const [kind, setKind] = useState<RegistryKind>(kinds.includes(initialKind) ? initialKind : kinds[0]);
  const [name, setName] = useState('');
  const [text, setText] = useState(specText(STARTERS[kind]));
  const action = useAction();
  const id = useId();

  const chooseKind = (next: RegistryKind): void => {
    // The starter of the old kind is swapped for the new one's; an edited spec is kept.
    if (text === specText(STARTERS[kind])) setText(specText(STARTERS[next]));
    setKind(next);
  };

  const create = async (spec: Record<string, unknown>): Promise<void> => {
    const entry = await action.run(() => client.registry.create({ namespace, kind, name, spec }));
    if (entry) navigate(`registry/${entry.kind}/${encodeURIComponent(entry.name)}`);
  };

  return (
    <section className="card create-entry" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New entry in {namespace}</h2>
      <div className="row create-key">
        <div className="field">
          <label htmlFor={`${id}-kind`}>Kind</label>
          <select id={`${id}-kind`} value={kind} onChange={(event) => chooseKind(event.target.value as RegistryKind)}>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input
            id={`${id}-name`}
            value={name}
            onChange={(event) => setName(event.target.value)}
            autoComplete="off"
            spellCheck={false}
            aria-describedby={`${id}-name-rule`}
          />
          <span id={`${id}-name-rule`} className="muted">
            1 to 64 of a–z, 0–9, “_” and “-”
          </span>
        </div>
      </div>
      <SpecEditor
        client={client}
        kind={kind}
        method="create"
        text={text}
        onText={setText}
        onSave={(spec) => void create(spec)}
        onCancel={onCancel}
        busy={action.busy}
        serverError={action.error}
        saveLabel={`Create ${kind}`}
      />
    </section>
  );
}
