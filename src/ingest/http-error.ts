// The error type that carries an answer of the ingestion API, and the answers built from the refusals table
// (src/events/refusals.ts, docs/spec.md §7).
import { DETAILED_REFUSALS, REFUSALS, type RefusalCode, SUCCESS_MESSAGE } from '../events/refusals.ts';

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

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: { message: string } & Record<string, unknown>,
    /** the refusal this answers, for the app's rejection log; null for answers that are not one */
    readonly refusal: RefusalCode | null = null,
  ) {
    super(body.message);
  }
}

/** the answer of a refusal of the table */
export function refusalError(code: RefusalCode): HttpError {
  const { status, message } = REFUSALS[code];
  return new HttpError(status, { message }, code);
}

export function validationError(errors: string[]): HttpError {
  const { status, message } = REFUSALS.validation;
  return new HttpError(status, { status, message, errors }, 'validation');
}

export function tooLarge(maxBodyBytes: number): HttpError {
  const { status, message } = DETAILED_REFUSALS.bodyTooLarge;
  return new HttpError(status, { message: message(maxBodyBytes) });
}

export function encodingUnsupported(encoding: string): HttpError {
  const { status, message } = DETAILED_REFUSALS.encodingUnsupported;
  return new HttpError(status, { message: message(encoding) });
}
