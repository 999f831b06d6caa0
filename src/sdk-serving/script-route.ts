// GET /index.js: the SDK script built into dist/sdk (by `npm ci` / `npm run build:sdk`), gzip when asked.
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { FastifyPluginAsync } from 'fastify';
import { describedOnly } from '../platform/described-route.ts';
import { SDK_SCRIPT } from './sdk-files.ts';

const sdkScriptSchema = {
  summary: 'The browser SDK script (gzip when the client accepts it)',
  response: {
    200: { description: 'The script', content: { 'application/javascript': { schema: { type: 'string' } } } },
    503: {
      description: 'The script is not built on this server',
      content: { 'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } } },
    },
  },
};

export const sdkScriptRoute: FastifyPluginAsync = async (app) => {
  let script: Buffer | undefined;
  try {
    script = fs.readFileSync(SDK_SCRIPT);
  } catch {
    app.log.warn(`${SDK_SCRIPT} is missing: run "npm run build:sdk" to serve GET /index.js`);
  }
  const gzipped = script && zlib.gzipSync(script, { level: 9 });
  app.get('/index.js', describedOnly(sdkScriptSchema), async (request, reply) => {
    if (!script || !gzipped) {
      reply.code(503);
      return { message: 'The SDK script is not built: run "npm run build:sdk" on the server.' };
    }
    reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('vary', 'accept-encoding');
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      reply.header('content-encoding', 'gzip');
      return gzipped;
    }
    return script;
  });
};
