import type { ComponentType } from 'react';
import { AuditPage } from './admin/audit';
import { KeysPage } from './admin/keys';
import { MembersPage } from './admin/members';
import { NamespacesPage } from './admin/namespaces';
import { UsagePage } from './admin/usage';
import type { PageProps } from './lib/page';
import { ApprovalPage, ApprovalsPage } from './pages/approvals';
import { ChatPage } from './pages/chat';
import { HomePage } from './pages/home';
import { RegistryEntryPage, RegistryPage } from './pages/registry';
import { SessionPage, SessionsPage } from './pages/sessions';

/** Every page and the path below the console that opens it; `admin` pages need the admin role in the namespace. */
export const ROUTES: readonly { path: string; page: ComponentType<PageProps>; admin?: boolean }[] = [
  { path: '', page: HomePage },
  { path: 'chat', page: ChatPage },
  { path: 'chat/:sessionId', page: ChatPage },
  { path: 'approvals', page: ApprovalsPage },
  { path: 'approvals/:approvalId', page: ApprovalPage },
  { path: 'sessions', page: SessionsPage },
  { path: 'sessions/:sessionId', page: SessionPage },
  { path: 'registry', page: RegistryPage },
  { path: 'registry/:kind/:name', page: RegistryEntryPage },
  { path: 'admin/namespaces', page: NamespacesPage, admin: true },
  { path: 'admin/members', page: MembersPage, admin: true },
  { path: 'admin/keys', page: KeysPage, admin: true },
  { path: 'admin/audit', page: AuditPage, admin: true },
  { path: 'admin/usage', page: UsagePage, admin: true },
];
