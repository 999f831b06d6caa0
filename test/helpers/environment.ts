// Which real components this machine offers to the tests, and the rule that they must not be skipped in CI.
import net from 'node:net';

/** CI=true or REQUIRE_SERVICES=1: a suite whose component is missing fails instead of skipping */
export const servicesRequired = process.env.CI === 'true' || process.env.REQUIRE_SERVICES === '1';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || defaultPort) });
    socket.setTimeout(1_000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * True when the component answers. When it does not: false outside CI (the suite skips), an error in CI.
 * Use as `describe.runIf(await available('PostgreSQL'))`.
 */
export async function available(component: 'PostgreSQL' | 'Redis'): Promise<boolean> {
  const up = component === 'PostgreSQL' ? await reachable(POSTGRES_ADMIN_URL, 5432) : await reachable(REDIS_URL, 6379);
  if (!up && servicesRequired) {
    throw new Error(`${component} is required (CI=true or REQUIRE_SERVICES=1) but does not answer`);
  }
  return up;
}
