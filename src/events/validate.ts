// Validates a decoded request body against the event schema and says precisely what failed.
import { Ajv, type ErrorObject } from 'ajv';
import { eventSchema } from './schema.ts';

export type RawEvent = Record<string, unknown> & { app_name: string; user_id: number };

export type BodyCheck = { ok: true; events: RawEvent[] } | { ok: false; errors: string[] };

const MAX_REPORTED_ERRORS = 20;
/** objects/arrays nested deeper than this inside one event are refused (storage and JSON stay bounded) */
export const MAX_NESTING = 16;

const ajv = new Ajv({ allErrors: true, strict: false });
const validateEvent = ajv.compile(eventSchema);

const FRIENDLY_TYPES: Record<string, string> = {
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};

function describeType(types: string | string[]): string {
  return (Array.isArray(types) ? types : [types])
    .filter((type) => type !== 'null')
    .map((type) => FRIENDLY_TYPES[type] ?? type)
    .join(' or ');
}

function pathOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('');
}

function describe(error: ErrorObject, where: string): string {
  const at = where + pathOf(error.instancePath);
  switch (error.keyword) {
    case 'required':
      return `${at}.${(error.params as { missingProperty: string }).missingProperty} is required`;
    case 'type':
      return `${at} must be ${describeType((error.params as { type: string | string[] }).type)}`;
    case 'pattern':
      return at.endsWith('.session_id') ? `${at} must be a UUID` : `${at} has an invalid format`;
    case 'enum':
      return at.endsWith('.event_name')
        ? `${at} must be one of the supported event names`
        : `${at} must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.filter((v) => v !== null).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'maxLength':
      return `${at} must be at most ${(error.params as { limit: number }).limit} characters`;
    case 'maxItems':
      return `${at} must have at most ${(error.params as { limit: number }).limit} items`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

/** deepest object/array nesting below value, counted without recursion so hostile input can't overflow */
function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

function checkEvent(event: unknown, where: string, errors: string[]): event is RawEvent {
  if (!validateEvent(event)) {
    for (const error of validateEvent.errors ?? []) errors.push(describe(error, where));
    return false;
  }
  if (nestingDepth(event, MAX_NESTING) > MAX_NESTING) {
    errors.push(`${where} is nested too deeply (at most ${MAX_NESTING} levels)`);
    return false;
  }
  return true;
}

/** One event object or a non-empty array of them, every one valid, at most maxEvents. */
export function checkBody(body: unknown, maxEvents: number): BodyCheck {
  const errors: string[] = [];
  if (Array.isArray(body)) {
    if (body.length === 0) return { ok: false, errors: ['body must contain at least one event'] };
    if (body.length > maxEvents) {
      return { ok: false, errors: [`body has ${body.length} events; at most ${maxEvents} are accepted per request`] };
    }
    body.forEach((event, index) => checkEvent(event, `events[${index}]`, errors));
    return errors.length === 0 ? { ok: true, events: body as RawEvent[] } : { ok: false, errors: errors.slice(0, MAX_REPORTED_ERRORS) };
  }
  if (body === null || typeof body !== 'object') {
    return { ok: false, errors: ['body must be an event object or an array of event objects'] };
  }
  return checkEvent(body, 'event', errors) ? { ok: true, events: [body] } : { ok: false, errors: errors.slice(0, MAX_REPORTED_ERRORS) };
}
