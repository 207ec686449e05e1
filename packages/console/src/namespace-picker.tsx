import type { ReactNode } from 'react';
import { useSession } from './lib/session';

/** The namespace the pages work in: the person's default and every namespace a grant names. */
export function NamespacePicker(): ReactNode {
  const { me, namespace, setNamespace } = useSession();
  const choices = [...new Set([me.defaultNamespace, ...me.grants.map((grant) => grant.namespace), namespace])].sort();
  return (
    <label className="picker">
      <span>Namespace</span>
      <select value={namespace} onChange={(event) => setNamespace(event.target.value)}>
        {choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}
