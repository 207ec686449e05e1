import { Global, Module } from '@nestjs/common';
import { PrincipalResolver } from './principal.resolver.js';

@Global()
@Module({ providers: [PrincipalResolver], exports: [PrincipalResolver] })
export class AuthModule {}
