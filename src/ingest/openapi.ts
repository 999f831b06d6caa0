// The schemas of the ingestion routes as GET /openapi.json publishes them: the event schema the validator uses,
// the token headers the pipeline reads and every answer it sends.
import { eventSchema } from '../events/request/schema.ts';
import { MESSAGES } from './http-error.ts';
import { TOKEN_HEADERS } from './steps.ts';

/** shared under its $id, so the document lists it once under components.schemas */
export const EVENT_SCHEMA_ID = 'Event';
export const sharedEventSchema = { $id: EVENT_SCHEMA_ID, ...eventSchema };
const event = { $ref: `${EVENT_SCHEMA_ID}#` };

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  required: ['message', ...Object.keys(extra)],
  properties: { message: { type: 'string', const: text }, ...extra },
});

const anyMessage = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } };

const json = (description: string, schema: object) => ({ description, content: { 'application/json': { schema } } });

export interface EventsRouteLimits {
  maxBodyBytes: number;
  maxEventsPerRequest: number;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  quotaEventsPerDay: number;
  quotaBytesPerDay: number;
}

export function postEventsSchema(limits: EventsRouteLimits) {
  return {
    summary: 'Record one event or an array of events',
    description:
      `All events of a request are stored or none is. An event sent again with the same client_timestamp (a ` +
      `retried batch) is stored once; events without a client_timestamp that reads as a time are each stored. ` +
      `Rate limit: ${limits.rateLimitMax} requests per ${limits.rateLimitWindowMs} ms per client IP and token. ` +
      `Daily quotas per app (unless an administrator set the app's own): ${limits.quotaEventsPerDay} events and ` +
      `${limits.quotaBytesPerDay} bytes of event JSON per UTC day; a request that would go beyond one is refused whole.`,
    headers: {
      type: 'object',
      properties: {
        [TOKEN_HEADERS[0]]: { type: 'string', description: 'access token (this header or the next is required)' },
        [TOKEN_HEADERS[1]]: { type: 'string', description: 'access token: the name the official client sends' },
        authorization: {
          type: 'string',
          description:
            "Bearer tma_server_…: a server key, for the app's own bot or backend instead of the token; no Origin " +
            'needed, and the only way to send bot-start, bot-command, successful-payment and refunded-payment',
        },
        'content-encoding': { enum: ['gzip', 'deflate', 'br', 'identity'] },
        origin: {
          type: 'string',
          description: "must be on one of the app's domains (else Referer); not with a server key",
        },
      },
    },
    body: {
      description:
        `One event or 1..${limits.maxEventsPerRequest} events, JSON, optionally gzip/deflate/br encoded; ` +
        `at most ${limits.maxBodyBytes} bytes before and after decoding`,
      oneOf: [event, { type: 'array', minItems: 1, maxItems: limits.maxEventsPerRequest, items: event }],
    },
    response: {
      201: json(
        "Every event of the request is on disk in the node's durable log; the store holds it shortly after",
        message(MESSAGES.success),
      ),
      400: json(
        'Not recorded: token header missing or malformed; token not issued here or revoked; app_name not the ' +
          "token's; body invalid; or the node's durable log is full or its disk failed (Failed to record: nothing " +
          'was stored, retry later)',
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
      ),
      403: json("Origin (or Referer) is not one of the app's domains", message(MESSAGES.domainMismatch)),
      413: json('Body larger than the limit, before or after decompression', anyMessage),
      415: json('Content-Type is not application/json, or Content-Encoding is not supported', anyMessage),
      429: {
        ...json("Rate limit exceeded, or the app's daily quota used up", message(MESSAGES.tooManyRequests)),
        headers: {
          'retry-after': {
            type: 'integer',
            description: 'seconds until a retry may succeed (for a quota: until the next UTC day)',
          },
        },
      },
    },
  };
}

export const thresholdSchema = {
  summary: 'Per-event caps the official @telegram-apps/analytics client asks for at init',
  response: {
    200: json('e.g. {"app-hide": 3}', { type: 'object', additionalProperties: { type: 'number' } }),
  },
};
