import { Injectable } from '@nestjs/common';
import { userInfo } from 'node:os';
import { AppConfig } from '../config/app.config.js';
import { Principal } from '../common/principal.js';

/**
 * The caller in local mode (stdio): the OS user, owner of every namespace (docs/protocol.md §2). HTTP callers
 * are established by HttpAuthGuard.
 */
@Injectable()
export class PrincipalResolver {
  private readonly localUser: string;

  constructor(private readonly config: AppConfig) {
    this.localUser = safeUsername();
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
