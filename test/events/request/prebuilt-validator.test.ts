// The built service checks events with the validator the build wrote as code (dist/server/event-validator.cjs,
// made by the global setup from the current source): for any event it gives the verdict and the errors of the
// validator compiled from the schema, which the service run from source uses.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { PAYMENT_EVENTS } from '../../../src/events/request/names.ts';
import { eventSchema } from '../../../src/events/request/schema.ts';
import { compileEventValidator, PREBUILT_VALIDATOR } from '../../../src/events/request/validate.ts';
import { makeEvent } from '../../helpers/events.ts';

const prebuilt = createRequire(import.meta.url)(PREBUILT_VALIDATOR) as ValidateFunction;
const compiled = compileEventValidator();

function outcome(validate: ValidateFunction, event: unknown) {
  const valid = validate(event);
  return { valid, errors: validate.errors ?? null };
}

const FIELDS = Object.keys(eventSchema.properties);
/** values at and past the schema's edges, and of every JSON type */
const ODD_VALUES = [null, '', 'x'.repeat(300), 0, -1, 1.5, 2 ** 53, true, [], {}, [1, 'a'], { a: { b: 1 } }];

describe('the event validator the build writes', () => {
  it('is the build of the current schema', () => {
    expect(outcome(prebuilt, makeEvent('prebuilt_app'))).toEqual({ valid: true, errors: null });
    expect(outcome(prebuilt, {})).toEqual(outcome(compiled, {}));
    expect(outcome(prebuilt, {}).valid).toBe(false);
  });

  it('answers every field at its edges as the compiled validator does', () => {
    for (const field of FIELDS) {
      for (const value of ODD_VALUES) {
        for (const event_name of ['app-init', PAYMENT_EVENTS[0]]) {
          const event = makeEvent('prebuilt_app', { event_name, [field]: value });
          expect(outcome(prebuilt, event), `${field} = ${JSON.stringify(value)}`).toEqual(outcome(compiled, event));
        }
      }
    }
  });

  it('answers any object made of the schema’s fields as the compiled validator does', () => {
    const anyEvent = fc.dictionary(fc.constantFrom(...FIELDS, 'extra'), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(anyEvent, (event) => {
        expect(outcome(prebuilt, event)).toEqual(outcome(compiled, event));
      }),
      { numRuns: 500 },
    );
  });
});
