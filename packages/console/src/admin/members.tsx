import type { MemberView } from '@cleveragents/contract';
import { useState, type SyntheticEvent, type ReactNode } from 'react';
import { ErrorNote, useAction, useLoad } from '../lib/calls';
import { Page, When, type PageProps } from '../lib/page';
import { useSession, type Role } from '../lib/session';
import { Confirm, Done, grantableRoles, Pager, RoleSelect, TableFrame, usePages } from './shared';

/** The namespace's members and their roles: change a role, add a subject, remove one. */
export function MembersPage(_props: PageProps): ReactNode {
  const { client, namespace, role } = useSession();
  const pages = usePages(namespace);
  const members = useLoad(
    () => client.namespaces.membersList({ namespace, pageSize: 50, pageToken: pages.token }),
    [client, namespace, pages.token],
  );
  const change = useAction();
  const [done, setDone] = useState<string>();
  const roles = grantableRoles(role);

  /** Runs a change and says what it did; true when the server took it. */
  const act = async (work: () => Promise<unknown>, said: string): Promise<boolean> => {
    setDone(undefined);
    const taken = (await change.run(work)) !== undefined;
    if (taken) setDone(said);
    members.reload();
    return taken;
  };

  return (
    <Page title="Members">
      <p className="muted">
        Who holds a role in {namespace} itself (a role held in a namespace above also applies here).
        {role !== 'owner' && ' Only an owner grants, changes or removes the owner role.'}
      </p>
      <AddMember
        roles={roles}
        onAdd={(subject, chosen) =>
          act(
            () => client.namespaces.membersSet({ namespace, subject, role: chosen, expectedRevision: 0 }),
            `${subject} is now ${chosen} in ${namespace}.`,
          )
        }
        busy={change.busy}
      />
      <h2>Members</h2>
      <ErrorNote error={members.error} />
      <ErrorNote error={change.error} />
      <Done text={done} />
      {members.data && members.data.items.length === 0 && <p>{namespace} has no member of its own.</p>}
      {members.data && members.data.items.length > 0 && (
        <TableFrame label="Members">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Subject</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {members.data.items.map((member) => (
                <MemberRow
                  key={member.subject}
                  member={member}
                  roles={roles}
                  busy={change.busy}
                  onSet={(chosen) =>
                    act(
                      () =>
                        client.namespaces.membersSet({
                          namespace,
                          subject: member.subject,
                          role: chosen,
                          expectedRevision: member.revision,
                        }),
                      `${member.subject} is now ${chosen} in ${namespace}.`,
                    )
                  }
                  onRemove={() =>
                    act(
                      () => client.namespaces.membersRemove({ namespace, subject: member.subject }),
                      `${member.subject} is no longer a member of ${namespace}.`,
                    )
                  }
                />
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      {members.data && (
        <Pager
          pages={pages}
          nextPageToken={members.data.nextPageToken}
          shown={members.data.items.length}
          totalSize={members.data.totalSize}
          noun="members"
        />
      )}
    </Page>
  );
}

function MemberRow({
  member,
  roles,
  busy,
  onSet,
  onRemove,
}: {
  member: MemberView;
  roles: Role[];
  busy: boolean;
  onSet: (role: Role) => Promise<boolean>;
  onRemove: () => Promise<boolean>;
}): ReactNode {
  const [chosen, setChosen] = useState<Role>(member.role);
  // Only an owner changes or removes an owner: for anyone else the row is shown, not offered.
  const locked = !roles.includes(member.role);
  return (
    <tr>
      <th scope="row" className="cell-text">
        {member.subject}
      </th>
      <td>
        {locked ? (
          member.role
        ) : (
          <div className="row">
            <RoleSelect label={`Role of ${member.subject}`} value={chosen} roles={roles} onChange={setChosen} />
            <button
              type="button"
              className="quiet"
              disabled={busy || chosen === member.role}
              onClick={() =>
                // A refused change puts the select back to the role the member holds.
                void onSet(chosen).then((taken) => taken || setChosen(member.role))
              }
            >
              Set role
            </button>
          </div>
        )}
      </td>
      <td>
        <When at={member.createdAt} />
        <div className="muted cell-text">by {member.createdBy}</div>
      </td>
      <td>
        {!locked && (
          <Confirm
            label={`Remove ${member.subject}`}
            question={`Remove ${member.subject} from the namespace?`}
            confirmLabel="Remove the member"
            busy={busy}
            onConfirm={onRemove}
          />
        )}
      </td>
    </tr>
  );
}

function AddMember({
  roles,
  busy,
  onAdd,
}: {
  roles: Role[];
  busy: boolean;
  onAdd: (subject: string, role: Role) => Promise<boolean>;
}): ReactNode {
  const [subject, setSubject] = useState('');
  const [role, setRole] = useState<Role>('member');
  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    if (await onAdd(subject.trim(), role)) setSubject('');
  };
  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="add-member">
      <h2 id="add-member">Add a member</h2>
      <div className="admin-form">
        <div className="field wide">
          <label htmlFor="member-subject">Subject</label>
          <input
            id="member-subject"
            value={subject}
            required
            maxLength={300}
            autoComplete="off"
            aria-describedby="member-subject-hint"
            onChange={(event) => setSubject(event.target.value)}
          />
          <span id="member-subject-hint" className="muted">
            As the person's whoami says it, such as oidc:alice or apikey:01J…
          </span>
        </div>
        <div className="field">
          <label htmlFor="member-role">Role</label>
          <RoleSelect id="member-role" value={role} roles={roles} onChange={setRole} />
        </div>
        <button type="submit" disabled={busy}>
          Add the member
        </button>
      </div>
    </form>
  );
}
