import type { ReactNode } from 'react';
import { Page, type PageProps } from '../lib/page';

export function ChatPage(_props: PageProps): ReactNode {
  return <Page title="Chat">{null}</Page>;
}
