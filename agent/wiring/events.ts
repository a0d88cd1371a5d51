/**
 * Start-up phase 5b (right after the credentials): the agent's event recorder, one broadcaster
 * writing as the node through the events' own client (eventRecordQPS / eventBurst), as upstream's
 * kubelet (one broadcaster, source {component: kubelet, host: <node name>}).
 */
import { EventBroadcaster } from '../../common/events/broadcaster';
import type { EventRecorder } from '../../common/events/recorder';
import { realClock } from '../../common/informer/clock';
import type { ApiClient } from '../client/api-client';
import { ApiEventSink } from '../client/event-sink';
import type { AgentContext } from './context';

/** The component name the agent reports events as: upstream's, so tools filtering on source=kubelet find them. */
export const EVENT_COMPONENT = 'kubelet';

export function startEvents(ctx: AgentContext, client: ApiClient): EventRecorder {
  const { cfg, log, signal, running, metrics } = ctx;
  const broadcaster = new EventBroadcaster(new ApiEventSink(client), {
    clock: realClock,
    log: log.child({ component: 'events' }),
    onDropped: (reason) => metrics.eventDropped(reason),
  });
  running.loops.push(broadcaster.run(signal));
  return broadcaster.recorder({ component: EVENT_COMPONENT, host: cfg.nodeName });
}
