// The script entry served at {service}/index.js: defines window.telegramAnalytics = { init, trackEvent },
// a drop-in for the official script; the endpoint defaults to the origin the script was loaded from.
import { initTracker, trackEvent, type InitOptions } from './tracker.ts';

const scriptSource = (document.currentScript as HTMLScriptElement | null)?.src;
const loadedFrom = scriptSource ? new URL(scriptSource).origin : undefined;

(window as unknown as { telegramAnalytics: object }).telegramAnalytics = {
  init: (options: InitOptions) => initTracker(options, loadedFrom),
  trackEvent,
};
