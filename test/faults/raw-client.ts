// A deliberately dumb HTTP/1.1 client over a raw TCP socket: it sends exactly the bytes a hostile case
// describes (invalid headers, wrong lengths, trickled bodies, half-sent requests) and reads whatever
// comes back until the server closes the connection. One connection per request (Connection: close).
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostileCase } from './hostile-corpus.ts';

export interface RawAnswer {
  /** null when no HTTP answer arrived (the connection was closed or reset first, or we gave up) */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  error?: string;
  ms: number;
}

function requestBytes(c: HostileCase): { head: Buffer; body: Buffer } {
  if (c.raw) return { head: c.raw, body: Buffer.alloc(0) };
  const lines = [
    `${c.method} ${c.path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...c.headers.map(([name, value]) => `${name}: ${value}`),
  ];
  const body = c.body ?? Buffer.alloc(0);
  let payload = body;
  if (c.chunked) {
    lines.push('Transfer-Encoding: chunked');
    const pieces: Buffer[] = [];
    for (let at = 0; at < body.length; at += c.chunked) {
      const piece = body.subarray(at, at + c.chunked);
      pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    pieces.push(Buffer.from('0\r\n\r\n'));
    payload = Buffer.concat(pieces);
  } else if (!c.headers.some(([name]) => name.toLowerCase() === 'content-length')) {
    lines.push(`Content-Length: ${body.length}`);
  }
  return { head: Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), body: payload };
}

function parse(data: Buffer): Pick<RawAnswer, 'status' | 'headers' | 'body'> | null {
  // skip interim answers (100 Continue)
  while (/^HTTP\/1\.[01] 1\d\d /.test(data.subarray(0, 16).toString('latin1'))) {
    const interimEnd = data.indexOf('\r\n\r\n');
    if (interimEnd < 0) return null;
    data = data.subarray(interimEnd + 4);
  }
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!match) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.subarray(end + 4);
  if (headers['transfer-encoding']?.includes('chunked')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd < 0) break;
      const length = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (!(length > 0)) break;
      parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + length));
      at = lineEnd + 2 + length + 2;
    }
    body = Buffer.concat(parts);
  }
  return { status: Number(match[1]), headers, body: body.toString('utf8') };
}

/**
 * Sends one case and retries (twice at most) a body larger than the server takes whose answer was lost to a
 * reset: the server answers 413 and closes while such a body is still arriving (Fastify does not linger),
 * and a client still writing then gets the connection reset, sometimes before it could read the 413.
 */
export async function sendRawRetrying(
  port: number,
  c: HostileCase,
  bodyLimit: number,
  timeoutMs = 20_000,
): Promise<RawAnswer & { attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    const answer = await sendRaw(port, c, timeoutMs);
    const lostToReset = answer.status === null && /EPIPE|ECONNRESET/.test(answer.error ?? '');
    if (!lostToReset || (c.body?.length ?? 0) <= bodyLimit || attempts === 3) return { ...answer, attempts };
  }
}

/** Sends one case; never throws. Gives up after timeoutMs (then status null, error "timeout"). */
export function sendRaw(port: number, c: HostileCase, timeoutMs = 20_000): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const finish = (why?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parse(Buffer.concat(received));
      resolve({
        status: parsed?.status ?? null,
        headers: parsed?.headers ?? {},
        body: parsed?.body ?? '',
        error: parsed ? undefined : (why ?? error ?? 'closed without an answer'),
        ms: performance.now() - started,
      });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message)); // EPIPE/ECONNRESET after an early answer are fine
    socket.on('close', () => finish());
    socket.once('connect', async () => {
      const { head, body } = requestBytes(c);
      const all = Buffer.concat([head, body]);
      try {
        if (c.trickle) {
          const limit = Math.min(all.length, c.abandonAfterBytes ?? all.length);
          for (let at = 0; at < limit && !settled; at += c.trickle.bytes) {
            socket.write(all.subarray(at, Math.min(at + c.trickle.bytes, limit)));
            await sleep(c.trickle.everyMs);
          }
          if (c.abandonAfterBytes !== undefined) return finish('abandoned by the client');
        } else if (c.abandonAfterBytes !== undefined && c.abandonAfterBytes < all.length) {
          socket.write(all.subarray(0, c.abandonAfterBytes));
          await sleep(50);
          return finish('abandoned by the client');
        } else {
          // Large bodies: like curl (Expect: 100-continue), give the server a moment to refuse after the head,
          // then send in pieces and stop once an answer (an early 413) arrives. Writing on into a connection the
          // server has closed gets it reset (Node's server does not linger) and the answer lost.
          const piece = 64 * 1024;
          const answered = () => settled || socket.destroyed || received.length > 0;
          if (body.length >= 256 * 1024) {
            socket.write(head);
            await new Promise((resolve) => {
              const timer = setTimeout(resolve, c.chunked ? 150 : 2_000); // a declared length over the limit is refused at once
              socket.once('data', () => (clearTimeout(timer), resolve(undefined)));
            });
          }
          const rest = body.length >= 256 * 1024 ? body : all;
          for (let at = 0; at < rest.length && !answered(); at += piece) {
            if (!socket.write(rest.subarray(at, at + piece))) {
              await new Promise((resolve) =>
                socket.once('drain', resolve).once('close', resolve).once('data', resolve),
              );
            } else {
              await new Promise((resolve) => setImmediate(resolve)); // let an answer be read before the next piece
            }
          }
        }
      } catch (e) {
        error = (e as Error).message;
      }
    });
  });
}
