/**
 * Preloaded with `NODE_OPTIONS=--require <this file>` (Node refuses --cpu-prof there) into a
 * process a benchmark wants profiled: starts the V8 CPU profiler and writes
 * <SVC_CPU_PROFILE_DIR>/<pid>.cpuprofile when the process exits (open it in Chrome DevTools).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env['SVC_CPU_PROFILE_DIR'];
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('exit', () => {
    // An in-thread session answers synchronously, so this works inside an exit handler.
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
