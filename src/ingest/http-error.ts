// The answers of the ingestion API built from the refusals table (src/events/request/refusals.ts, docs/spec.md §7), and the
// HTTP error that also names its refusal for the app's rejection log.
import { DETAILED_REFUSALS, REFUSALS, type RefusalCode, SUCCESS_MESSAGE } from '../events/request/refusals.ts';
import { HttpError } from '../platform/http-error.ts';

/** the exact messages of the spec's answers */
export const MESSAGES = {
  success: SUCCESS_MESSAGE,
  failedToRecord: REFUSALS.failedToRecord.message,
  tokenMissing: REFUSALS.tokenMissing.message,
  tokenInvalid: REFUSALS.tokenInvalid.message,
  appNameInvalid: REFUSALS.appNameInvalid.message,
  validation: REFUSALS.validation.message,
  domainMismatch: REFUSALS.domainMismatch.message,
  tooManyRequests: REFUSALS.rateLimited.message,
} as const;

/** an answer of the refusals table: the rejection log of the app it was meant for records it */
export class RefusalError extends HttpError {
  constructor(
    statusCode: number,
    body: { message: string } & Record<string, unknown>,
    readonly refusal: RefusalCode,
  ) {
    super(statusCode, body);
  }
}

/** the answer of a refusal of the table */
export function refusalError(code: RefusalCode): RefusalError {
  const { status, message } = REFUSALS[code];
  return new RefusalError(status, { message }, code);
}

export function validationError(errors: string[]): RefusalError {
  const { status, message } = REFUSALS.validation;
  return new RefusalError(status, { status, message, errors }, 'validation');
}

export function tooLarge(maxBodyBytes: number): HttpError {
  const { status, message } = DETAILED_REFUSALS.bodyTooLarge;
  return new HttpError(status, { message: message(maxBodyBytes) });
}

export function encodingUnsupported(encoding: string): HttpError {
  const { status, message } = DETAILED_REFUSALS.encodingUnsupported;
  return new HttpError(status, { message: message(encoding) });
}
