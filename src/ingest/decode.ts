// Pipeline step "decode": reads the body (plain or gzip/deflate/br), caps its decoded size and nesting, parses
// JSON safely (no prototype pollution). Replaces Fastify's JSON parser for the whole service.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { HttpError } from '../platform/http-error.ts';
import { encodingUnsupported, tooLarge, validationError } from './http-error.ts';
import { nestsDeeperThan } from './json-depth.ts';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

/**
 * Compressed bodies up to this size are inflated on the spot: a client's batch is a few kilobytes, and the
 * thread-pool round trip costs more than inflating it. Larger ones go to the pool; either way the output stops
 * at maxBodyBytes.
 */
const INFLATE_IN_PLACE_BYTES = 16 * 1024;

/**
 * Bodies larger than this have their nesting measured before they are parsed: a smaller one cannot nest deeply
 * enough to cost much, and measuring costs half as much as parsing.
 */
const MEASURE_NESTING_FROM_BYTES = 16 * 1024;
/**
 * The deepest nesting a large body may have to be parsed at all: well above what a valid event carries (an array,
 * the event, then 16 levels inside it), so moderately deep bodies still hear exactly where they go too deep.
 */
const MAX_BODY_NESTING = 64;

async function decompress(encoding: string, body: Buffer, maxBodyBytes: number): Promise<Buffer> {
  const limits = { maxOutputLength: maxBodyBytes };
  const inPlace = body.length <= INFLATE_IN_PLACE_BYTES;
  try {
    switch (encoding) {
      case '':
      case 'identity':
        return body;
      case 'gzip':
      case 'x-gzip':
        return inPlace ? zlib.gunzipSync(body, limits) : await gunzip(body, limits);
      case 'deflate':
        return inPlace ? zlib.inflateSync(body, limits) : await inflate(body, limits);
      case 'br':
        return inPlace ? zlib.brotliDecompressSync(body, limits) : await brotli(body, limits);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBodyBytes);
    throw validationError([`body is not valid ${encoding} data`]);
  }
  throw encodingUnsupported(encoding);
}

/** refuses a large body nested absurdly deep before the parser builds it */
function refuseDeepNesting(body: Buffer): void {
  if (body.length > MEASURE_NESTING_FROM_BYTES && nestsDeeperThan(body, MAX_BODY_NESTING))
    throw validationError([`body is nested too deeply (at most ${MAX_BODY_NESTING} levels)`]);
}

export function parseJson(text: string): unknown {
  let parsed: unknown;
  try {
    // safe mode: a forbidden key makes the result null, where it would throw the same SyntaxError as bad JSON
    parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error', safe: true });
  } catch {
    throw validationError(['body is not valid JSON']);
  }
  // the only JSON text that parses to null is "null" itself (with JSON whitespace, or a BOM that trim() removes too)
  if (parsed === null && text.trim() !== 'null') {
    throw validationError(['body must not contain "__proto__" or "constructor.prototype" keys']);
  }
  return parsed;
}

/**
 * A body refused on a route other than /events: the spec's VALIDATION_MISMATCH_REPORT is the ingest API's answer;
 * the site and the read API say what is wrong in words ("The request body is not valid JSON.")
 */
function plainRefusal(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  const [reason] = Array.isArray(error.body.errors) ? error.body.errors : [];
  return typeof reason === 'string' ? new HttpError(error.statusCode, { message: `The request ${reason}.` }) : error;
}

export function registerDecoder(app: FastifyInstance, maxBodyBytes: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: maxBodyBytes },
    async (request: FastifyRequest, raw: Buffer) => {
      const encoding = String(request.headers['content-encoding'] ?? '')
        .trim()
        .toLowerCase();
      try {
        const decoded = await decompress(encoding, raw, maxBodyBytes);
        refuseDeepNesting(decoded);
        return parseJson(decoded.toString('utf8'));
      } catch (error) {
        throw request.routeOptions.url === '/events' ? error : plainRefusal(error);
      }
    },
  );
}
