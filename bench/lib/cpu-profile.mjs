// Preloaded into a bench's service child (`--import`, through NODE_OPTIONS) by `--cpu-prof DIR`: records CPU profiles
// of the main thread into $BENCH_CPU_PROF_DIR (node's own --cpu-prof flag is not allowed in NODE_OPTIONS). SIGUSR2
// ends the profile so far as <pid>-<n>.cpuprofile and starts the next, so a bench can cut out the phase it studies;
// the last one is written at exit.
import fs from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  let part = 0;
  // a same-thread session answers synchronously, so the profile is written even from the exit event
  const cut = () =>
    session.post('Profiler.stop', (error, result) => {
      if (!error)
        fs.writeFileSync(path.join(dir, `${process.pid}-${part++}.cpuprofile`), JSON.stringify(result.profile));
    });
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  process.on('SIGUSR2', () => {
    cut();
    session.post('Profiler.start');
  });
  process.once('exit', cut);
}
