import { Injectable } from '@nestjs/common';
import { userInfo } from 'node:os';
import { AppConfig } from '../config/app.config.js';
import { Principal } from './principal.js';

/**
 * Establishes the caller. With the `none` scheme every HTTP caller is the anonymous owner of every
 * namespace (development and conformance only; refused in production by AppConfig). Local mode
 * (stdio) is the OS user, owner of every namespace (SPEC.md §2).
 */
@Injectable()
export class PrincipalResolver {
  private readonly localUser: string;

  constructor(private readonly config: AppConfig) {
    this.localUser = safeUsername();
  }

  forHttp(_headers: Readonly<Record<string, string | undefined>>): Principal {
    return Principal.anonymous(this.config.defaultNamespace);
  }

  forStdio(): Principal {
    return Principal.local(this.localUser, this.config.defaultNamespace);
  }
}

function safeUsername(): string {
  try {
    return userInfo().username;
  } catch {
    return 'local';
  }
}
