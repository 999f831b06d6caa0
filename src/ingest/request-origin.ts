// Where a request comes from: the Origin header, else the Referer, as a URL origin and a lowercase host.
import type { FastifyRequest } from 'fastify';

export interface RequestOrigin {
  /** e.g. "https://app.example.com"; what rejections show */
  origin: string;
  /** e.g. "app.example.com"; what is matched against the app's domains (port ignored) */
  host: string;
}

export function requestOrigin(request: FastifyRequest): RequestOrigin | null {
  const { origin, referer } = request.headers;
  for (const candidate of [origin, referer]) {
    if (typeof candidate !== 'string' || candidate === '' || candidate === 'null') continue;
    try {
      const url = new URL(candidate);
      if (url.hostname) return { origin: url.origin, host: url.hostname.toLowerCase().replace(/\.$/, '') };
    } catch {
      // not a URL: try the next header
    }
  }
  return null;
}

/** what a rejection records as its origin even when it is not a usable URL */
export function describeOrigin(request: FastifyRequest): string | null {
  const parsed = requestOrigin(request);
  if (parsed) return parsed.origin;
  const raw = request.headers.origin ?? request.headers.referer;
  return typeof raw === 'string' && raw !== '' ? raw : null;
}
