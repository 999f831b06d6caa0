// JSON Schema of one event (docs/spec.md §2): the validator compiles it and the OpenAPI document publishes it.
import { EVENT_NAMES, PAYMENT_EVENTS } from './names.ts';

/** any 8-4-4-4-12 hex string: the official client's session ids are UUID-shaped but not always v4 */
export const SESSION_ID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** numeric 0/1 (spec), the spec's names, and the names TON Connect libraries send */
export const AUTH_TYPES = [0, 1, 'wallet_addr', 'wallet_proof', 'ton_addr', 'ton_proof'] as const;

/**
 * A Telegram user id, as the contract types it: a JSON integer. Telegram's ids fit in 52 bits, and a JSON number
 * carries every integer up to 2^53 - 1 exactly (2^53 + 1 would arrive as 2^53 and merge two users).
 */
export const USER_ID_RULE = 'must be an integer from 1 to 2^53 - 1';

// optional fields may also be null, which means "not given" (TON Connect sends null wallet fields)
const text = (maxLength: number, description: string) => ({ type: ['string', 'null'], maxLength, description });

/** a payment's amount: a whole number of the currency's smallest unit (Stars are whole) */
export const MAX_PAYMENT_AMOUNT = 1_000_000_000;

export const eventSchema = {
  type: 'object',
  required: ['user_id', 'event_name', 'session_id', 'app_name'],
  additionalProperties: true,
  // a payment server event without a readable amount would count as nothing on the revenue card: refused instead
  if: { properties: { event_name: { enum: PAYMENT_EVENTS } }, required: ['event_name'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a promise
  then: {
    required: ['custom_data'],
    properties: {
      custom_data: {
        type: 'object',
        required: ['amount', 'currency'],
        properties: {
          amount: { type: 'integer', minimum: 0, maximum: MAX_PAYMENT_AMOUNT },
          currency: { type: 'string', minLength: 1, maxLength: 8 },
          invoice_payload: { type: 'string', maxLength: 128 },
        },
      },
    },
  },
  properties: {
    user_id: {
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'Telegram user id: a JSON integer from 1 to 2^53 - 1 (a string, a fraction or a larger number is refused). ' +
        'Stored only as a keyed per-app hash',
    },
    event_name: { type: 'string', enum: EVENT_NAMES, description: 'one of the supported event names' },
    session_id: { type: 'string', pattern: SESSION_ID_PATTERN, description: 'UUID of the user session' },
    app_name: { type: 'string', maxLength: 64, description: 'the app_name given when the token was created' },
    is_premium: { type: ['boolean', 'null'], description: 'premium account; default false' },
    is_success: { type: ['boolean', 'null'], description: 'wallet connected or transaction successful; default false' },
    error_message: text(8192, 'error text of a failed connection or transaction'),
    error_code: { type: ['number', 'null'], description: 'error code of a failed connection or transaction' },
    wallet_address: text(512, 'wallet address involved'),
    wallet_type: text(256, 'type of the wallet'),
    wallet_version: text(256, 'version of the wallet software'),
    auth_type: {
      enum: [...AUTH_TYPES, null],
      description: '0 = wallet_addr (ton_addr), 1 = wallet_proof (ton_proof); stored as 0 or 1',
    },
    valid_until: text(256, 'epoch seconds until which a transaction offer is valid'),
    from: text(512, 'wallet address that initiates the transaction'),
    messages: {
      type: ['array', 'null'],
      maxItems: 256,
      description: 'transfers involved in the event',
      items: {
        type: 'object',
        required: ['address', 'amount'],
        additionalProperties: true,
        properties: { address: { type: 'string', maxLength: 512 }, amount: { type: 'string', maxLength: 256 } },
      },
    },
    custom_data: { type: ['object', 'null'], description: 'free-form details of the event' },
    client_timestamp: text(
      256,
      'epoch milliseconds (string of digits) when the event occurred on the client; an event sent again with the same ' +
        'client_timestamp (a retry) is stored once, events without one are each stored',
    ),
    platform: text(256, 'platform the mini app was opened from'),
    locale: text(256, 'user language code'),
    start_param: text(8192, 'launch parameter of the mini app'),
    url_referer: text(8192, 'URL of the page that sent the event; stored without query and fragment'),
    scope: text(256, 'for disconnection: whether the app ("dapp") or the wallet disconnected'),
  },
} as const;
