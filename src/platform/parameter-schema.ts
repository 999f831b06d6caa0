// Text parameters as every surface's route schemas check them, and the one message each check gives: PostgreSQL
// cannot hold a NUL character, so a NUL in a path or query parameter is refused before it reaches a query.
import type { FastifySchemaValidationError } from 'fastify';

/** no NUL character anywhere in the value */
const NO_NUL = '^[^\\u0000]*$';

/** a text parameter of at most maxLength characters, without NUL */
export const textParameter = (maxLength: number) => ({ type: 'string', maxLength, pattern: NO_NUL }) as const;

/** the parameter a validation error is about: an unexpected one, a missing one, or the value's path */
export function parameterOf(error: FastifySchemaValidationError | undefined): string {
  return String(
    error?.params?.additionalProperty ??
      error?.params?.missingProperty ??
      error?.instancePath.split('/').filter(Boolean).join('.') ??
      '',
  );
}

/** what is wrong with the parameter, to follow its name in a message */
export function parameterProblem(error: FastifySchemaValidationError | undefined): string {
  if (error?.keyword === 'type') return `must be given once, as ${String(error.params.type)}`;
  if (error?.keyword === 'pattern' && error.params.pattern === NO_NUL) return 'must not contain a NUL character';
  if (error?.keyword === 'required') return 'is required';
  if (error?.keyword === 'enum')
    return `must be one of ${(error.params.allowedValues as unknown[]).map((value) => `"${String(value)}"`).join(', ')}`;
  return error?.message ?? 'is not valid';
}
