import { Module, type DynamicModule, type MiddlewareConsumer, type NestModule, type Type } from '@nestjs/common';
import { PushModule } from '../push/push.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { ReplicaModule } from '../replica/replica.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RpcMetrics } from '../metrics/metrics.service.js';
import { A2aController } from './a2a.controller.js';
import { SpecRequestHandler } from './spec-request-handler.js';
import { StreamCursors } from './stream-cursors.js';
import { CallFailures } from './call-failures.js';
import { A2A_REQUEST_HANDLER } from './a2a.tokens.js';
import { AgentCardController } from './agent-card/agent-card.controller.js';
import { MethodSchemasController } from './agent-card/method-schemas.controller.js';
import { AgentCardService } from './agent-card/agent-card.service.js';
import { HttpResponder } from './http-responder.js';
import { JsonRpcBodyMiddleware } from './jsonrpc-body.middleware.js';
import { RequestContextMiddleware } from './request-context.middleware.js';
import { CallObserver, JsonRpcDispatcher } from './jsonrpc.dispatcher.js';
import { ExtensionInvoker } from './extension.invoker.js';
import { StandardInvoker } from './standard.invoker.js';
import { OpenStreams } from './open-streams.js';
import { GracefulShutdown, InFlightCalls } from './graceful-shutdown.js';
import { RpcModule } from '../rpc/rpc.module.js';
import { StdioTransport } from './stdio.transport.js';
import { TaskControl } from '../turn/task-control.js';
import { HandlerTaskControl } from './handler-task-control.js';

/**
 * The transport (HTTP, stdio, the JSON-RPC dispatcher, the SDK's request handler) and TaskControl over it.
 * `auth` and `memberships` are the modules that authenticate callers and provide MembershipDirectory.
 */
@Module({})
export class A2aModule implements NestModule {
  static forRoot(options: { auth: DynamicModule; memberships: Type | DynamicModule }): DynamicModule {
    return {
      module: A2aModule,
      imports: [RpcModule, PushModule, MetricsModule, TurnModule, ReplicaModule, options.auth, options.memberships],
      controllers: [A2aController, AgentCardController, MethodSchemasController],
      providers: [
        AgentCardService,
        OpenStreams,
        HttpResponder,
        StdioTransport,
        InFlightCalls,
        GracefulShutdown,
        CallFailures,
        StreamCursors,
        SpecRequestHandler,
        { provide: A2A_REQUEST_HANDLER, useExisting: SpecRequestHandler },
        ExtensionInvoker,
        StandardInvoker,
        JsonRpcDispatcher,
        // Every call the dispatcher answers is counted by the process's RPC metrics.
        { provide: CallObserver, useExisting: RpcMetrics },
        // turn/'s port: plan/execute and plan/cancel start and cancel tasks as a client would.
        { provide: TaskControl, useClass: HandlerTaskControl },
      ],
      exports: [JsonRpcDispatcher, StdioTransport, RpcModule, AgentCardService, SpecRequestHandler, TaskControl],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonRpcBodyMiddleware, RequestContextMiddleware).forRoutes('a2a');
  }
}
