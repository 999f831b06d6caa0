// The package entry: `import { init, trackEvent } from 'tma-analytics-sdk'`; call init before rendering.
import { initTracker, trackEvent, type InitOptions } from './tracker.ts';

declare const __DEFAULT_ENDPOINT__: string;

export type { InitOptions };
export { trackEvent };

/** Starts collecting; endpoint defaults to the service address baked in at build time (PUBLIC_URL). */
export function init(options: InitOptions): void {
  initTracker(options, __DEFAULT_ENDPOINT__ || undefined);
}
