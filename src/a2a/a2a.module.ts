import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { TypeOrmPushNotificationStore } from '../database/typeorm-push-notification.store.js';
import { PushModule } from '../push/push.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { ReplicaModule } from '../replica/replica.module.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import { RemoteTurnControls } from '../replica/remote-turn-controls.js';
import { RemoteTaskEvents } from '../replica/remote-task-events.js';
import { TaskRecovery } from '../replica/task-recovery.js';
import { resolveStoreScope } from '../database/store-scope.js';
import { MessageAdmissions } from '../turn/message-admissions.js';
import { WebhookUrlGuard } from '../push/webhook-url.guard.js';
import { ValidatingPushNotificationStore } from '../push/validating-push-notification.store.js';
import { GuardedPushNotificationSender } from '../push/guarded-push-notification.sender.js';
import { AppConfig } from '../config/app.config.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import type { Principal } from '../auth/principal.js';
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
    {
      provide: A2A_REQUEST_HANDLER,
      inject: [
        AgentCardService,
        TypeOrmTaskStore,
        TypeOrmPushNotificationStore,
        SessionWorkflow,
        SessionEventBuses,
        RemoteTurnControls,
        RemoteTaskEvents,
        TaskRecovery,
        WebhookUrlGuard,
        AppConfig,
      ],
      useFactory: (
        cards: AgentCardService,
        tasks: TypeOrmTaskStore,
        pushConfigs: TypeOrmPushNotificationStore,
        workflow: SessionWorkflow,
        buses: SessionEventBuses,
        turnControls: RemoteTurnControls,
        remoteEvents: RemoteTaskEvents,
        recovery: TaskRecovery,
        guard: WebhookUrlGuard,
        config: AppConfig,
      ) => {
        const pushStore = new ValidatingPushNotificationStore(pushConfigs, guard);
        const sender = new GuardedPushNotificationSender(pushStore, guard, config);
        const handler = new SpecRequestHandler(cards.sdkCard(), tasks, workflow, buses, pushStore, sender, (context) =>
          cards.extendedCard(context.user as Principal),
        );
        // Plans start and cancel their tasks as a client would: stored, streamed and relayed like any task.
        workflow.useTaskControl({
          start: async (message, context) => {
            const result = await handler.sendMessage(
              {
                tenant: context.tenant ?? '',
                message,
                configuration: {
                  acceptedOutputModes: [],
                  taskPushNotificationConfig: undefined,
                  returnImmediately: true,
                },
                metadata: undefined,
              },
              context,
            );
            if (!('status' in result)) throw new Error('The A2A handler answered a plan with a message, not a task');
            return result;
          },
          cancel: (taskId, context) =>
            handler.cancelTask({ tenant: context.tenant ?? '', id: taskId, metadata: undefined }, context),
        });
        handler.relayCancels((taskId, context) =>
          turnControls.requestElsewhere(resolveStoreScope(context, config.defaultNamespace), taskId, 'cancel'),
        );
        handler.onCanceledAtRest((before, context) =>
          workflow.canceledAtRest(resolveStoreScope(context, config.defaultNamespace), before),
        );
        handler.relaySubscriptions((taskId, context) =>
          remoteEvents.open(resolveStoreScope(context, config.defaultNamespace), taskId, () =>
            tasks.load(taskId, context),
          ),
        );
        // What a turn recovered after a restart stores is pushed to the task's webhooks, as the SDK does
        // for the events of a request.
        recovery.onStoredEvent((event, context, task) => {
          void sender.send({ payload: { $case: event.kind, value: event.data } } as never, context, task);
        });
        return handler;
      },
    },
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
  exports: [JsonRpcDispatcher, StdioTransport, RpcModule, AgentCardService],
})
export class A2aModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(JsonRpcBodyMiddleware, RequestContextMiddleware).forRoutes('a2a');
  }
}
