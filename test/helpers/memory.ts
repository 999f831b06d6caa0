// What the test's own process really holds: its resident size right after a full garbage collection, so
// garbage that merely waits for the collector's next major cycle (100-200 MB under a load of thousands of
// requests a second, measured) does not count as growth, while anything still referenced does.
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

export function residentAfterGc(): number {
  collectGarbage();
  return process.memoryUsage().rss;
}
