import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { PushModule } from '../push/push.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { ReplicaModule } from '../replica/replica.module.js';
import { MessageAdmissions } from '../turn/message-admissions.js';
import { AppConfig } from '../config/app.config.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RpcMetrics } from '../metrics/metrics.service.js';
import { A2aController } from './a2a.controller.js';
import { SpecRequestHandler } from './spec-request-handler.js';
import { A2A_REQUEST_HANDLER } from './a2a.tokens.js';
import { AgentCardController } from './agent-card/agent-card.controller.js';
import { AgentCardService } from './agent-card/agent-card.service.js';
import { HttpResponder } from './http-responder.js';
import { JsonRpcBodyMiddleware } from './jsonrpc-body.middleware.js';
import { RequestContextMiddleware } from './request-context.middleware.js';
import { JsonRpcDispatcher } from './jsonrpc.dispatcher.js';
import { ExtensionInvoker } from './extension.invoker.js';
import { StandardInvoker } from './standard.invoker.js';
import { OpenStreams } from './open-streams.js';
import { GracefulShutdown, InFlightCalls } from './graceful-shutdown.js';
import { RpcModule } from '../rpc/rpc.module.js';
import { StdioTransport } from './stdio.transport.js';

@Module({
  imports: [RpcModule, PushModule, MetricsModule, TurnModule, ReplicaModule],
  controllers: [A2aController, AgentCardController],
  providers: [
    AgentCardService,
    OpenStreams,
    HttpResponder,
    StdioTransport,
    InFlightCalls,
    GracefulShutdown,
    SpecRequestHandler,
    { provide: A2A_REQUEST_HANDLER, useExisting: SpecRequestHandler },
    ExtensionInvoker,
    {
      provide: StandardInvoker,
      inject: [A2A_REQUEST_HANDLER, AppConfig, InFlightCalls, MembershipDirectory, MessageAdmissions, OpenStreams],
      useFactory: (
        handler: SpecRequestHandler,
        config: AppConfig,
        inFlight: InFlightCalls,
        namespaces: MembershipDirectory,
        admissions: MessageAdmissions,
        openStreams: OpenStreams,
      ) => {
        const invoker = new StandardInvoker(handler, config, inFlight, namespaces, openStreams);
        // A message that starts a task goes to its session first (SPEC.md §4, §6.4), in conformance mode too.
        invoker.setAdmission((scope, message, context) => admissions.admit(scope, message, context));
        return invoker;
      },
    },
    {
      provide: JsonRpcDispatcher,
      inject: [ExtensionInvoker, StandardInvoker, AppConfig, InFlightCalls, RpcMetrics],
      useFactory: (
        extensions: ExtensionInvoker,
        standard: StandardInvoker,
        config: AppConfig,
        inFlight: InFlightCalls,
        metrics: RpcMetrics,
      ) => {
        const dispatcher = new JsonRpcDispatcher(extensions, standard, config, inFlight);
        dispatcher.setObserver((method, code, transport, seconds) => metrics.observe(method, code, transport, seconds));
        return dispatcher;
      },
    },
  ],
  exports: [JsonRpcDispatcher, StdioTransport, RpcModule, AgentCardService, SpecRequestHandler],
})
export class A2aModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonRpcBodyMiddleware, RequestContextMiddleware).forRoutes('a2a');
  }
}
