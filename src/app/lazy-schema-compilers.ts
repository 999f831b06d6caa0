// Fastify's schema compilers, made lazy: a route's validators and response serializer are compiled on its first
// request instead of at ready, and Ajv and fast-json-stringify load then too, so a start answers /healthz without
// compiling the schemas of every site and read API route.
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/** what Fastify hands a route's compiler: the schema of one part (params, body, a response) and where it is */
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
}
/** Fastify's compilers factory shape: (external schemas, compiler options) → (route schema) → compiled function */
export type Build<Compiled> = (externalSchemas: unknown, options: unknown) => (routeSchema: RouteSchema) => Compiled;
export type Serializer = (data: unknown) => string;

export interface CompiledValidator {
  (data: unknown, dataContext?: unknown): unknown;
  errors?: unknown;
  schemaEnv?: unknown;
}

const require = createRequire(import.meta.url);

/** a value made by make() on first use, then kept */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/**
 * A validator that compiles on its first call. Fastify reads `errors` after a failed call, and passes Ajv's data
 * context (so a root value can be coerced) when `schemaEnv` is set: both are read through to the compiled function.
 */
function lazyValidator(compile: () => CompiledValidator): CompiledValidator {
  const compiled = once(compile);
  const validator = ((data: unknown, dataContext?: unknown) => compiled()(data, dataContext)) as CompiledValidator;
  Object.defineProperties(validator, {
    errors: { get: () => compiled().errors },
    schemaEnv: { get: () => compiled().schemaEnv },
  });
  return validator;
}

/** where the real compilers come from: Fastify's own defaults, loaded on first use */
export interface CompilerSources {
  validators: () => Build<CompiledValidator>;
  serializers: () => Build<Serializer>;
}

export const FASTIFY_COMPILERS: CompilerSources = {
  // @fastify/ajv-compiler's selector makes one Ajv per set of external schemas, as Fastify does without this
  validators: () => (require('@fastify/ajv-compiler') as () => Build<CompiledValidator>)(),
  serializers: () => (require('@fastify/fast-json-stringify-compiler') as () => Build<Serializer>)(),
};

/** Fastify's `schemaController` option with lazy compilers (Fastify types them per Ajv and JTD; these serve both) */
export function lazySchemaController(
  sources: CompilerSources = FASTIFY_COMPILERS,
): FastifyServerOptions['schemaController'] {
  const buildValidator: Build<CompiledValidator> = (externalSchemas, ajvOptions) => {
    const compilerOf = once(() => sources.validators()(externalSchemas, ajvOptions));
    return (routeSchema) => lazyValidator(() => compilerOf()(routeSchema));
  };
  const buildSerializer: Build<Serializer> = (externalSchemas, serializerOptions) => {
    const compilerOf = once(() => sources.serializers()(externalSchemas, serializerOptions));
    return (routeSchema) => {
      const compiled = once(() => compilerOf()(routeSchema));
      return (data) => compiled()(data);
    };
  };
  return {
    compilersFactory: { buildValidator, buildSerializer },
  } as unknown as FastifyServerOptions['schemaController'];
}
