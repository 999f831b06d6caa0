// Route options whose schema describes a route for GET /openapi.json and nothing else, for any surface's routes:
// Fastify neither validates the request against it nor serializes the answer with it, so the route answers exactly
// what its own steps send.
import type { FastifySchema } from 'fastify';

const acceptAnything = () => () => true;
const asBuilt = () => (data: unknown) => JSON.stringify(data);

/** the route's own steps check the request and build every answer; the schema only tells clients about them */
export function describedOnly<Schema extends FastifySchema>(schema: Schema) {
  return { schema, validatorCompiler: acceptAnything, serializerCompiler: asBuilt };
}
