// The package entry: `import telegramAnalytics from 'tma-analytics-sdk'` (the official package's default export: init
// and registerInvoice) or `import { init, registerInvoice, trackEvent } from 'tma-analytics-sdk'`; init before rendering.
import { initTracker, registerInvoice, trackEvent, type InitOptions, type InvoicePayload } from './tracker.ts';

declare const __DEFAULT_ENDPOINT__: string;

export type { InitOptions, InvoicePayload };
export { registerInvoice, trackEvent };

/** Starts collecting; endpoint defaults to the service address baked in at build time (PUBLIC_URL). */
export function init(options: InitOptions): Promise<void> {
  return initTracker(options, __DEFAULT_ENDPOINT__ || undefined);
}

const telegramAnalytics = { init, registerInvoice, trackEvent };
export default telegramAnalytics;
