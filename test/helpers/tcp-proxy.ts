// A TCP proxy in front of a real server (PostgreSQL by default) that a test can cut and restore, to
// simulate the store going away and coming back without touching the server itself.
import net from 'node:net';

/**
 * reset: every open connection is reset and every new one is reset as soon as it is accepted (a crashed
 * server, a refused port). blackhole: connections stay open but nothing is forwarded any more, and new
 * ones are accepted and never answered (a frozen server, a partition behind a load balancer).
 */
export type CutMode = 'reset' | 'blackhole';

export interface TcpProxy {
  port: number;
  /** the current cut, or null while forwarding */
  readonly cutMode: CutMode | null;
  /** connections accepted so far (forwarded or not) */
  readonly accepted: number;
  /** stops forwarding: by default destroys every open connection and each new one as soon as it is accepted */
  cut(mode?: CutMode): void;
  /** forwards new connections again (connections held by a blackhole are reset) */
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream?: net.Socket;
}

function reset(socket: net.Socket | undefined): void {
  if (!socket) return;
  socket.on('error', () => undefined);
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

export async function startTcpProxy(target: { host?: string; port?: number } = {}): Promise<TcpProxy> {
  const host = target.host ?? '127.0.0.1';
  const port = target.port ?? 5432;
  const forwarding = new Set<Pair>();
  const held = new Set<Pair>();
  let cutMode: CutMode | null = null;
  let accepted = 0;

  const drop = (pair: Pair) => {
    reset(pair.client);
    reset(pair.upstream);
    forwarding.delete(pair);
    held.delete(pair);
  };

  const hold = (pair: Pair) => {
    pair.client.unpipe();
    pair.upstream?.unpipe();
    pair.client.pause();
    pair.upstream?.pause();
    forwarding.delete(pair);
    held.add(pair);
  };

  const server = net.createServer((client) => {
    accepted++;
    const pair: Pair = { client };
    client.on('error', () => drop(pair)).on('close', () => drop(pair));
    if (cutMode === 'reset') return drop(pair);
    if (cutMode === 'blackhole') return hold(pair);
    const upstream = net.connect({ host, port });
    pair.upstream = upstream;
    upstream.on('error', () => drop(pair)).on('close', () => drop(pair));
    forwarding.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });

  return {
    port: (server.address() as net.AddressInfo).port,
    get cutMode() {
      return cutMode;
    },
    get accepted() {
      return accepted;
    },
    cut(mode = 'reset') {
      cutMode = mode;
      for (const pair of [...forwarding]) {
        if (mode === 'reset') drop(pair);
        else hold(pair);
      }
    },
    restore() {
      cutMode = null;
      for (const pair of [...held]) drop(pair);
    },
    close() {
      cutMode = 'reset';
      for (const pair of [...forwarding, ...held]) drop(pair);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same connection URL, pointed at the proxy's port on 127.0.0.1. */
export function throughProxy(databaseUrl: string, proxy: Pick<TcpProxy, 'port'>): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}
