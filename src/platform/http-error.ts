// The one error type that carries an HTTP answer (status and JSON body): ingestion, the read API and the site throw
// it, and the service's error handler (src/app/errors.ts) sends it as it is.
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: { message: string } & Record<string, unknown>,
  ) {
    super(body.message);
  }
}

/** an answer with a message, and the field it is about where there is one */
export function refused(statusCode: number, message: string, field?: string): HttpError {
  return new HttpError(statusCode, { message, ...(field ? { field } : {}) });
}
