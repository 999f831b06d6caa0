// The OpenAPI 3.1 description of the HTTP API, built from the same event schema the validator uses.
import { MESSAGES } from './http-error.ts';
import { eventSchema } from '../events/schema.ts';

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  required: ['message', ...Object.keys(extra)],
  properties: { message: { type: 'string', const: text }, ...extra },
});

const anyMessage = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } };

const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });

export function openApiDocument(options: {
  maxBodyBytes: number;
  maxEventsPerRequest: number;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  quotaEventsPerDay: number;
  quotaBytesPerDay: number;
}) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Telegram Mini App event analytics',
      version: '1.0.0',
      description:
        'Records usage events of Telegram Mini Apps. Accepts the traffic of the official ' +
        '@telegram-apps/analytics client unchanged (gzip bodies, TGA-Auth-Token header, CORS preflight). ' +
        'The signed-in site API under /api/apps (session cookie, same-origin JSON only) is described in README.md.',
    },
    paths: {
      '/events': {
        post: {
          summary: 'Record one event or an array of events',
          description:
            `Body: one event or 1..${options.maxEventsPerRequest} events, JSON, optionally gzip/deflate/br ` +
            `encoded; at most ${options.maxBodyBytes} bytes before and after decoding. All events of a request ` +
            `are stored or none is. An event sent again with the same client_timestamp (a retried batch) is stored ` +
            `once; events without a client_timestamp that reads as a time are each stored. Rate limit: ` +
            `${options.rateLimitMax} requests per ${options.rateLimitWindowMs} ms per client IP and token. Daily quotas ` +
            `per app (unless an administrator set the app's own): ${options.quotaEventsPerDay} events and ` +
            `${options.quotaBytesPerDay} bytes of event JSON per UTC day; a request that would go beyond one is refused whole.`,
          parameters: [
            { name: 'ANALYTICS-Auth-Token', in: 'header', schema: { type: 'string' }, description: 'access token' },
            {
              name: 'TGA-Auth-Token',
              in: 'header',
              schema: { type: 'string' },
              description: 'alias used by the official client',
            },
            { name: 'Content-Encoding', in: 'header', schema: { enum: ['gzip', 'deflate', 'br', 'identity'] } },
            {
              name: 'Origin',
              in: 'header',
              schema: { type: 'string' },
              description: "must be on one of the app's domains (else Referer)",
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  oneOf: [
                    { $ref: '#/components/schemas/Event' },
                    {
                      type: 'array',
                      minItems: 1,
                      maxItems: options.maxEventsPerRequest,
                      items: { $ref: '#/components/schemas/Event' },
                    },
                  ],
                },
              },
            },
          },
          responses: {
            '201': json(
              message(MESSAGES.success),
              "Every event of the request is on disk in the node's durable log; the store holds it shortly after",
            ),
            '400': json(
              {
                oneOf: [
                  message(MESSAGES.tokenMissing),
                  message(MESSAGES.tokenInvalid),
                  message(MESSAGES.appNameInvalid),
                  message(MESSAGES.failedToRecord),
                  message(MESSAGES.validation, {
                    status: { type: 'number', const: 400 },
                    errors: {
                      type: 'array',
                      items: { type: 'string' },
                      description: 'what failed, e.g. "events[0].session_id must be a UUID"',
                    },
                  }),
                ],
              },
              'Not recorded: token header missing or malformed; token not issued here or revoked; app_name not the ' +
                "token's; body invalid; or the node's durable log is full or its disk failed (Failed to record: nothing was stored, retry later)",
            ),
            '403': json(message(MESSAGES.domainMismatch), "Origin (or Referer) is not one of the app's domains"),
            '413': json(anyMessage, 'Body larger than the limit, before or after decompression'),
            '415': json(anyMessage, 'Content-Type is not application/json, or Content-Encoding is not supported'),
            '429': json(
              message(MESSAGES.tooManyRequests),
              "Rate limit exceeded, or the app's daily quota used up; Retry-After tells when to retry (the next UTC day for a quota)",
            ),
          },
        },
        options: {
          summary: 'CORS preflight; any origin, headers content-type, content-encoding and both token headers',
          responses: { '204': { description: 'Preflight accepted' } },
        },
      },
      '/events/threshold': {
        get: {
          summary: 'Per-event caps the official @telegram-apps/analytics client asks for at init',
          responses: {
            '200': json({ type: 'object', additionalProperties: { type: 'number' } }, 'e.g. {"app-hide": 3}'),
          },
        },
      },
      '/index.js': {
        get: {
          summary: 'The SDK script: defines window.telegramAnalytics with init({ token, appName }) and trackEvent',
          responses: {
            '200': { description: 'JavaScript (gzip when accepted)' },
            '503': json(anyMessage, 'The SDK has not been built on this server'),
          },
        },
      },
      '/api/catalog': {
        get: {
          summary: 'The public catalog ranking: apps by score with every component (recomputed every 15 minutes)',
          responses: {
            '200': {
              description:
                'JSON: computed_at, formula, weights, apps[{ rank, app_name, bot, score, unranked_reason, components }]',
            },
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'Liveness, whether the store answers, and the backlog of the durable log',
          responses: {
            '200': json(
              {
                type: 'object',
                required: ['status', 'store', 'backlog', 'loaded_through'],
                properties: {
                  status: { enum: ['ok', 'store unavailable'] },
                  store: { enum: ['embedded', 'server'] },
                  backlog: {
                    type: 'object',
                    description: 'requests in the durable log that the store does not hold yet',
                    properties: {
                      requests: { type: 'integer' },
                      events: { type: 'integer' },
                      bytes: { type: 'integer' },
                      oldest_seconds: { type: 'number' },
                    },
                  },
                  loaded_through: { type: 'integer', description: 'the last log record the store holds' },
                },
              },
              'Ingesting: status "ok", or "store unavailable" while the events wait in the log',
            ),
          },
        },
      },
      '/metrics': {
        get: { summary: 'Prometheus metrics', responses: { '200': { description: 'text exposition format' } } },
      },
      '/openapi.json': {
        get: { summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1 document' } } },
      },
    },
    components: { schemas: { Event: eventSchema } },
  };
}
