// The page shell of every site page: one stylesheet (light and dark, readable on a phone), header, nav; inside
// Telegram, Telegram's script and the Mini App's shell instead of a sign-out.
import { escapeHtml } from '../platform/html.ts';

/** Telegram's script for Mini Apps (Telegram.WebApp), loaded only by pages of a session begun inside Telegram */
export const TELEGRAM_WEB_APP_SCRIPT = 'https://telegram.org/js/telegram-web-app.js';

const STYLE = `
:root{--bg:#f6f7f9;--card:#fff;--text:#17202a;--muted:#667085;--line:#e4e7ec;--accent:#2481cc;--accent-text:#fff;--good:#1a7f37;--warn:#b54708;--bad:#b42318}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--card:#182029;--text:#e6edf3;--muted:#8b98a5;--line:#2b3640;--accent:#4ea4f6;--accent-text:#0f1419;--good:#3fb950;--warn:#d29922;--bad:#f85149}}
:root[data-scheme=light]{--bg:#f6f7f9;--card:#fff;--text:#17202a;--muted:#667085;--line:#e4e7ec;--accent:#2481cc;--accent-text:#fff;--good:#1a7f37;--warn:#b54708;--bad:#b42318;color-scheme:light}
:root[data-scheme=dark]{--bg:#0f1419;--card:#182029;--text:#e6edf3;--muted:#8b98a5;--line:#2b3640;--accent:#4ea4f6;--accent-text:#0f1419;--good:#3fb950;--warn:#d29922;--bad:#f85149;color-scheme:dark}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
a{color:var(--link,var(--accent));text-decoration:none}a:hover{text-decoration:underline}
header{background:var(--card);border-bottom:1px solid var(--line)}
header .bar{max-width:1100px;margin:0 auto;padding:12px 16px;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
header .brand{font-weight:700;color:var(--text);font-size:17px}
header nav{display:flex;gap:14px;flex-wrap:wrap}header .who{margin-left:auto;color:var(--muted);font-size:14px}
main{max-width:1100px;margin:0 auto;padding:20px 16px 48px}
h1{font-size:24px;margin:4px 0 16px}h2{font-size:17px;margin:0 0 12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px;margin-bottom:16px;overflow-x:auto}
.grid{display:grid;gap:16px;grid-template-columns:repeat(auto-fit,minmax(min(100%,320px),1fr))}
.kpis{display:grid;gap:12px;grid-template-columns:repeat(auto-fit,minmax(140px,1fr));margin-bottom:16px}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:12px 14px}
.kpi .label{color:var(--muted);font-size:13px}.kpi .value{font-size:24px;font-weight:650}.kpi .small-value{font-size:17px}
.nowrap{white-space:nowrap}.u-legend{font-size:13px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:13px}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:var(--muted)}.good{color:var(--good)}.warn{color:var(--warn)}.bad{color:var(--bad)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
pre{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:10px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
button,.button{font:inherit;border:0;border-radius:8px;padding:8px 14px;background:var(--accent);color:var(--accent-text);cursor:pointer;display:inline-block}
button.secondary,.button.secondary{background:transparent;color:var(--accent);border:1px solid var(--line)}
button.danger{background:var(--bad);color:#fff}
input,select{font:inherit;padding:8px 10px;border:1px solid var(--line);border-radius:8px;background:var(--card);color:var(--text);width:100%}
form.stack{display:grid;gap:10px;max-width:520px}label{display:grid;gap:4px;font-size:14px}
.row{display:flex;gap:8px;flex-wrap:wrap;align-items:center}
.notice{padding:10px 12px;border-radius:8px;border:1px solid var(--line);background:var(--bg)}
.error{color:var(--bad)}
.bar-track{background:var(--bg);border-radius:6px;height:10px;min-width:60px}.bar-fill{background:var(--accent);height:10px;border-radius:6px}
.chart{width:100%;min-height:240px}
.app-item{display:grid;gap:8px;padding:14px 0;border-bottom:1px solid var(--line)}.app-item:last-child{border-bottom:0}
.chip{display:inline-flex;gap:4px;align-items:center;padding:2px 8px;border:1px solid var(--line);border-radius:999px}
button.small,.button.small{padding:5px 10px;font-size:14px}button.link{background:none;color:var(--muted);padding:0 2px}
form.signout{display:inline}form.signout button{color:var(--accent);font-size:inherit;padding:0}
.small{font-size:13px}
label.check{display:flex;gap:8px;align-items:center}label.check input{width:auto;margin:0}
.headline{display:grid;gap:10px;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));margin:12px 0}
.kpi.pick{font:inherit;text-align:left;color:var(--text);cursor:pointer}.kpi.pick[aria-pressed=true]{border-color:var(--accent);box-shadow:inset 0 0 0 1px var(--accent)}
.kpi .change{font-size:13px}
.sections[hidden]{display:none}.sections{display:flex;gap:6px;overflow-x:auto;padding:2px 0 10px;margin-bottom:6px;scrollbar-width:thin}
.sections a{white-space:nowrap;padding:4px 10px;border:1px solid var(--line);border-radius:999px;background:var(--card);font-size:14px}
details.filters{margin-bottom:16px}details.filters>summary{cursor:pointer;color:var(--link,var(--accent));margin-bottom:8px}
.checklist{list-style:none;padding:0;margin:12px 0 0;display:grid;gap:12px}.checklist li{display:grid;grid-template-columns:22px 1fr;gap:6px}
.checklist .mark{font-weight:700}.checklist .done .mark{color:var(--good)}.checklist .todo .mark{color:var(--muted)}
.code{position:relative;margin:8px 0}.code pre{white-space:pre;word-break:normal;overflow-x:auto;margin:0;padding-right:72px}
.code .copy{position:absolute;top:6px;right:6px}
.scroll-hint{display:none;font-size:13px;color:var(--muted);margin-top:6px}.scrolls .scroll-hint{display:block}
@media (max-width:600px){h1{font-size:20px}th,td{padding:6px}.hide-narrow{display:none}main{padding:14px 10px 40px}.card{padding:12px}.headline{grid-template-columns:repeat(2,minmax(0,1fr))}.kpi .value{font-size:20px}}
`;

// drawn inline: emoji fonts are missing on many machines
const LOGO =
  '<svg width="20" height="20" viewBox="0 0 20 20" aria-hidden="true" style="vertical-align:-3px"><rect x="2" y="10" width="4" height="8" rx="1" fill="currentColor" opacity=".5"/><rect x="8" y="5" width="4" height="13" rx="1" fill="currentColor" opacity=".75"/><rect x="14" y="2" width="4" height="16" rx="1" fill="currentColor"/></svg>';

export interface PageOptions {
  title: string;
  body: string;
  /** the signed-in user's display name; undefined when signed out */
  user?: string;
  /** extra tags for <head> (scripts, styles) */
  head?: string;
  /** the session began inside Telegram: the page uses Telegram.WebApp (theme, BackButton) and has no sign-out */
  miniApp?: boolean;
  /** where Telegram's BackButton goes from this page (Mini App only) */
  back?: string;
  /** the service's public address (PUBLIC_URL) the page's snippets name; without it, the page's own origin */
  base?: string;
}

export function page({ title, body, user, head = '', miniApp = false, back, base }: PageOptions): string {
  const nav = user
    ? `<a href="/analytics">Analytics</a><a href="/catalog">Catalog</a>`
    : `<a href="/catalog">Catalog</a><a href="/login">Sign in</a>`;
  // sign-out is a same-origin POST (a link could be followed from any site)
  // inside Telegram the session is Telegram's: closing the Mini App ends the visit, a sign-out would strand it
  let who = '';
  if (user && miniApp) who = `<span class="who">${escapeHtml(user)}</span>`;
  else if (user)
    who = `<span class="who">${escapeHtml(user)} · <form class="signout" method="post" action="/logout"><button type="submit" class="link">Sign out</button></form></span>`;
  const telegram = miniApp ? `<script src="${TELEGRAM_WEB_APP_SCRIPT}"></script>` : '';
  const shell = miniApp ? '<script src="/assets/mini-app.js"></script>' : '';
  const backTo =
    (miniApp && back ? ` data-back="${escapeHtml(back)}"` : '') + (base ? ` data-base="${escapeHtml(base)}"` : '');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Mini App Analytics</title><style>${STYLE}</style>${telegram}${head}</head>
<body${backTo}><header><div class="bar"><a class="brand" href="/">${LOGO} Mini App Analytics</a><nav>${nav}</nav>${who}</div></header>
<main>${body}</main>${shell}</body></html>`;
}
