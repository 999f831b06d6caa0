// The exact answers of the ingestion API (docs/spec.md §7) and the error type that carries them.

export const MESSAGES = {
  success: 'Success record.',
  failedToRecord: 'Failed to record',
  tokenMissing: 'The token is not specified in the headers or is specified incorrectly.',
  tokenInvalid: 'Token is invalid.',
  appNameInvalid: 'Invalid app_name is specified.',
  validation: 'VALIDATION_MISMATCH_REPORT',
  domainMismatch: 'The domain name does not match.',
  tooManyRequests: 'Too many requests. Try again later.',
} as const;

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: { message: string } & Record<string, unknown>,
  ) {
    super(body.message);
  }
}

export function validationError(errors: string[]): HttpError {
  return new HttpError(400, { status: 400, message: MESSAGES.validation, errors });
}
