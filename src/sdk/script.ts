// The script entry served at {service}/index.js: defines window.telegramAnalytics = { init, registerInvoice,
// trackEvent }, a drop-in for the official script's global. The endpoint defaults to where the script was loaded
// from: its folder, so a service behind a path prefix (https://host/analytics/index.js) is found too.
import { initTracker, registerInvoice, trackEvent, type InitOptions } from './tracker.ts';

const scriptSource = (document.currentScript as HTMLScriptElement | null)?.src;
const loadedFrom = scriptSource ? new URL('.', scriptSource).href : undefined;

(window as unknown as { telegramAnalytics: object }).telegramAnalytics = {
  init: (options: InitOptions) => initTracker(options, loadedFrom),
  registerInvoice,
  trackEvent,
};
