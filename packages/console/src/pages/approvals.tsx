import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function ApprovalsPage(_props: PageProps): ReactNode {
  return <Page title="Approvals">{null}</Page>;
}

export function ApprovalPage(_props: PageProps): ReactNode {
  return <Page title="Approval">{null}</Page>;
}
