// Validates a decoded request body against the event schema and says precisely what failed.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { BUILT, SERVER_BUILD_DIR } from '../../platform/project-paths.ts';
import { eventSchema, USER_ID_RULE } from './schema.ts';

export type RawEvent = Record<string, unknown> & { app_name: string; user_id: number };

export type BodyCheck = { ok: true; events: RawEvent[] } | { ok: false; errors: string[] };

const MAX_REPORTED_ERRORS = 20;
/** objects/arrays nested deeper than this inside one event are refused (storage and JSON stay bounded) */
export const MAX_NESTING = 16;

const require = createRequire(import.meta.url);
let compiled: ValidateFunction | undefined;

/** Ajv's options for the event schema: the validator compiled here and the one the build writes use the same */
const VALIDATOR_OPTIONS: Options = { allErrors: true, strict: false };

/** the event schema's validator as the build writes it beside the service: Ajv's code for it, needing no Ajv */
export const PREBUILT_VALIDATOR = path.join(SERVER_BUILD_DIR, 'event-validator.cjs');

/** the event schema's validator compiled now (loading Ajv and compiling take about a tenth of a second) */
export function compileEventValidator(): ValidateFunction {
  const { Ajv } = require('ajv') as typeof import('ajv');
  return new Ajv(VALIDATOR_OPTIONS).compile(eventSchema);
}

/** the validator's code for PREBUILT_VALIDATOR, as a CommonJS module (Ajv's standalone code) */
export function eventValidatorCode(): string {
  const { Ajv } = require('ajv') as typeof import('ajv');
  const standaloneCode = (require('ajv/dist/standalone/index.js') as typeof import('ajv/dist/standalone/index.js'))
    .default;
  const ajv = new Ajv({ ...VALIDATOR_OPTIONS, code: { source: true } });
  return standaloneCode(ajv, ajv.compile(eventSchema));
}

/**
 * The event schema's validator, made on first use or by prepareEventValidator: the build's, which it wrote from the
 * same schema (src/build/build-service.ts); from source, compiled
 */
function eventValidator(): ValidateFunction {
  compiled ??= BUILT ? (require(PREBUILT_VALIDATOR) as ValidateFunction) : compileEventValidator();
  return compiled;
}

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
  if (error.schemaPath.startsWith('#/properties/user_id/')) return `${at} ${USER_ID_RULE}`; // one rule, whichever keyword failed
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
        : `${at} must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues
            .filter((v) => v !== null)
            .map((v) => JSON.stringify(v))
            .join(', ')}`;
    case 'minimum':
    case 'maximum':
      return `${at} must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${(error.params as { limit: number }).limit}`;
    case 'maxLength':
      return `${at} must be at most ${(error.params as { limit: number }).limit} characters`;
    case 'maxItems':
      return `${at} must have at most ${(error.params as { limit: number }).limit} items`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

/** a key as shown in an error: bounded, since it is the client's text */
const MAX_SHOWN_KEY = 64;

interface Visit {
  node: object;
  depth: number;
  parent: Visit | null;
  /** the key of node in its parent (an index when the parent is an array) */
  key: string;
}

/** e.g. ".custom_data.prices[2]" from the visits up to the event */
function pathTo(visit: Visit, key: string): string {
  const parts: string[] = [];
  for (let at: Visit | null = visit, name = key; at; name = at.key, at = at.parent) {
    parts.push(
      Array.isArray(at.node)
        ? `[${name}]`
        : `.${name.length > MAX_SHOWN_KEY ? `${name.slice(0, MAX_SHOWN_KEY)}…` : name}`,
    );
  }
  return parts.reverse().join('');
}

/**
 * What the schema cannot say about a whole event, found without recursion so hostile input can't overflow:
 * nesting deeper than the limit, and numbers JSON cannot carry (a literal such as 1e400 parses to Infinity,
 * which JSON and PostgreSQL's jsonb would turn into null). Null when there is neither.
 */
function shapeProblem(event: object, where: string, limit: number): string | null {
  const stack: Visit[] = [{ node: event, depth: 0, parent: null, key: '' }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (visit.depth > limit) return `${where} is nested too deeply (at most ${limit} levels)`;
    const node = visit.node as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (typeof child === 'number' && !Number.isFinite(child))
        return `${where}${pathTo(visit, key)} must be a finite number`;
      if (child !== null && typeof child === 'object')
        stack.push({ node: child, depth: visit.depth + 1, parent: visit, key });
    }
  }
  return null;
}

function checkEvent(event: unknown, where: string, errors: string[]): event is RawEvent {
  const validateEvent = eventValidator();
  if (!validateEvent(event)) {
    for (const error of validateEvent.errors ?? []) {
      if (error.keyword === 'if') continue; // says only that a "then" failed, which its own errors tell better
      const text = describe(error, where);
      if (!errors.includes(text)) errors.push(text);
    }
    return false;
  }
  const problem = shapeProblem(event as object, where, MAX_NESTING);
  if (problem !== null) {
    errors.push(problem);
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
    return errors.length === 0
      ? { ok: true, events: body as RawEvent[] }
      : { ok: false, errors: errors.slice(0, MAX_REPORTED_ERRORS) };
  }
  if (body === null || typeof body !== 'object') {
    return { ok: false, errors: ['body must be an event object or an array of event objects'] };
  }
  return checkEvent(body, 'event', errors)
    ? { ok: true, events: [body] }
    : { ok: false, errors: errors.slice(0, MAX_REPORTED_ERRORS) };
}

/** makes the event validator now */
export function prepareEventValidator(): void {
  eventValidator();
}
