// Every refusal of the ingestion API: its code, HTTP status, exact message (docs/spec.md §7) and what the app's
// owner is told about it (the bot, the site and the CLI show the reason; the API answers the message).

export interface Refusal {
  status: number;
  /** the answer's message, exact: clients match on it */
  message: string;
  /** what the owner reads when a request of their app was refused */
  reason: string;
}

const TOO_MANY_REQUESTS = 'Too many requests. Try again later.';

/** the spec's refusals, then the service's own answers to requests it cannot read */
export const REFUSALS = {
  failedToRecord: { status: 400, message: 'Failed to record', reason: 'storage failure on the service side' },
  tokenMissing: {
    status: 400,
    message: 'The token is not specified in the headers or is specified incorrectly.',
    reason: 'no token in the request',
  },
  tokenInvalid: { status: 400, message: 'Token is invalid.', reason: 'token invalid (revoked or replaced)' },
  appNameInvalid: {
    status: 400,
    message: 'Invalid app_name is specified.',
    reason: 'app_name in the events does not match the token',
  },
  validation: { status: 400, message: 'VALIDATION_MISMATCH_REPORT', reason: 'events did not pass validation' },
  domainMismatch: { status: 403, message: 'The domain name does not match.', reason: 'domain mismatch' },
  // listed before the quotas, which answer the same message: an old row without its own reason reads as this
  rateLimited: { status: 429, message: TOO_MANY_REQUESTS, reason: 'rate limited' },
  dailyEventQuota: { status: 429, message: TOO_MANY_REQUESTS, reason: 'daily event quota reached' },
  dailyByteQuota: { status: 429, message: TOO_MANY_REQUESTS, reason: 'daily byte quota reached' },
  contentTypeUnsupported: {
    status: 415,
    message: 'Content-Type must be application/json.',
    reason: 'not a JSON request',
  },
  contentLengthMismatch: {
    status: 400,
    message: 'The body does not match its Content-Length.',
    reason: 'body shorter or longer than its Content-Length',
  },
} as const satisfies Record<string, Refusal>;

export type RefusalCode = keyof typeof REFUSALS;

/** the refusals whose message says what was wrong with the request, so it is built per request */
export const DETAILED_REFUSALS = {
  bodyTooLarge: {
    status: 413,
    message: (maxBodyBytes: number) =>
      `Request body is too large: at most ${maxBodyBytes} bytes (after decompression).`,
    reason: 'request body too large',
  },
  encodingUnsupported: {
    status: 415,
    message: (encoding: string) =>
      `Content-Encoding "${encoding}" is not supported: send gzip, deflate, br or no encoding.`,
    reason: 'unsupported Content-Encoding',
  },
} as const;

/** the answer to a request whose events are all recorded */
export const SUCCESS_MESSAGE = 'Success record.';

const BY_MESSAGE = new Map<string, Refusal>();
for (const refusal of Object.values(REFUSALS))
  if (!BY_MESSAGE.has(refusal.message)) BY_MESSAGE.set(refusal.message, refusal);

/** the refusal a stored message stands for (rows keep status and message, not the code); undefined if unknown */
export function refusalOfMessage(message: string): Refusal | undefined {
  return BY_MESSAGE.get(message);
}

/** what a stored rejection tells its owner: its own reason (a quota's, with the limit), else its refusal's */
export function rejectionReason(rejection: { message: string; reason?: string | null }): string {
  return rejection.reason ?? refusalOfMessage(rejection.message)?.reason ?? rejection.message;
}
