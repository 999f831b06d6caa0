// Route schemas of the site: every path and query parameter is checked by Fastify before a handler runs,
// so a repeated key (an array), a NUL byte or a megabyte of text is a 400 with a readable message.
import type { FastifySchema, FastifySchemaValidationError } from 'fastify';
import { parameterOf, parameterProblem, textParameter } from '../platform/parameter-schema.ts';

type SchemaErrorDataVar = 'body' | 'headers' | 'params' | 'querystring';

const APP_NAME = '^[a-z0-9_-]{3,64}$';
const APP_NAME_MESSAGE = 'The app name must be 3–64 characters: lowercase letters, digits, "_" or "-".';

/** one value of at most maxLength characters, without NUL */
export const text = textParameter;

export const appNameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', pattern: APP_NAME } },
} as const;

export function fields(properties: Record<string, object>, additional?: object) {
  return { type: 'object', properties, ...(additional ? { additionalProperties: additional } : {}) } as const;
}

const PLACE: Record<SchemaErrorDataVar, string> = {
  params: 'path parameter',
  querystring: 'query parameter',
  headers: 'header',
  body: 'body field',
};

function formatErrors(errors: FastifySchemaValidationError[], dataVar: SchemaErrorDataVar): Error {
  const [error] = errors;
  const field = parameterOf(error);
  if (dataVar === 'params' && field === 'name' && error?.keyword === 'pattern') return new Error(APP_NAME_MESSAGE);
  const problem = parameterProblem(error);
  return new Error(
    field ? `The ${PLACE[dataVar]} "${field}" ${problem}.` : `The ${PLACE[dataVar]}s are not valid: ${problem}.`,
  );
}

/** route options that validate params and query with the site's messages */
export function validated(schema: FastifySchema) {
  return { schema, schemaErrorFormatter: formatErrors };
}
