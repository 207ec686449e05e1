import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';
import { consoleBase } from './base';

/**
 * The console's routes are paths below its base (`approvals/<id>`, `admin/keys`), kept in the address bar
 * with the History API so that a deep link or a reload opens the same page (the server answers every
 * such path with the console's index.html).
 */
const listeners = new Set<() => void>();
const notify = (): void => listeners.forEach((listener) => listener());
window.addEventListener('popstate', notify);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The path below the console's base, without a leading `/` (`""` is the overview). */
export function routePath(): string {
  const path = decodeURI(location.pathname);
  return path.startsWith(consoleBase) ? path.slice(consoleBase.length).replace(/\/+$/, '') : '';
}

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = consoleBase + path.replace(/^\/+/, '');
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  notify();
  window.scrollTo(0, 0);
}

/** The current route path and query, re-rendering on navigation. */
export function useRoute(): { path: string; query: URLSearchParams } {
  const key = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  void key;
  return { path: routePath(), query: new URLSearchParams(location.search) };
}

/** `pattern` like `approvals/:id` against `path`: the named segments, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i += 1) {
    if (want[i].startsWith(':')) {
      if (!have[i]) return null;
      params[want[i].slice(1)] = have[i];
    } else if (want[i] !== have[i]) return null;
  }
  return params;
}

/** A link inside the console: a real `<a href>` (open in a new tab works), navigating in place on a plain click. */
export function Link(
  props: { to: string; children: ReactNode } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>,
): ReactNode {
  const { to, children, onClick, ...rest } = props;
  const handle = (event: MouseEvent<HTMLAnchorElement>): void => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(to);
  };
  const current = routePath() === to || (to !== '' && routePath().startsWith(`${to}/`));
  return (
    <a href={consoleBase + to} onClick={handle} aria-current={current ? 'page' : undefined} {...rest}>
      {children}
    </a>
  );
}
