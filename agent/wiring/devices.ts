/**
 * Start-up phase 4: device plugins. The checkpoint is read and stale sockets removed before
 * kubelet.sock is served, so plugins that notice their socket vanished register against this run.
 */
import path from 'node:path';
import { DeviceManager } from '../devices/device-manager';
import { RegistrationServer } from '../devices/registration-server';
import { StartupError } from '../platform/startup-checks';
import { abortPromise, type AgentContext } from './context';

export async function startDevices(ctx: AgentContext): Promise<DeviceManager> {
  const { cfg, log, signal, clock, running } = ctx;
  const c = cfg.config;
  // Device plugins: the checkpoint is read and stale sockets removed before kubelet.sock is
  // served, so plugins that notice their socket vanished register against this run.
  const deviceDir = path.join(cfg.flags.rootDir, 'device-plugins');
  const devices = new DeviceManager({
    dir: deviceDir,
    clock,
    log: log.child({ component: 'devices' }),
    gracePeriodMs: c.devicePluginGracePeriod,
    admissionWaitMs: c.devicePluginAdmissionWait,
    callTimeoutMs: c.devicePluginCallTimeout,
  });
  await devices.start();
  const registration = new RegistrationServer({ dir: deviceDir, registrar: devices, log: log.child({ component: 'devices' }) });
  try {
    await registration.start();
  } catch (e) {
    throw new StartupError(`cannot serve device plugin registration on ${registration.socketPath}: ${(e as Error).message}`);
  }
  running.loops.push(
    abortPromise(signal).then(async () => {
      await devices.stop();
      await registration.stop();
    }),
  );
  return devices;
}
