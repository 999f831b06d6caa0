// The page shell of every site page: one stylesheet (light and dark, readable on a phone), header, nav.
import { escapeHtml } from './html.ts';

const STYLE = `
:root{--bg:#f6f7f9;--card:#fff;--text:#17202a;--muted:#667085;--line:#e4e7ec;--accent:#2481cc;--accent-text:#fff;--good:#1a7f37;--warn:#b54708;--bad:#b42318}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--card:#182029;--text:#e6edf3;--muted:#8b98a5;--line:#2b3640;--accent:#4ea4f6;--accent-text:#0f1419}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
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
@media (max-width:600px){h1{font-size:20px}th,td{padding:6px}.hide-narrow{display:none}}
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
}

export function page({ title, body, user, head = '' }: PageOptions): string {
  const nav = user
    ? `<a href="/analytics">Analytics</a><a href="/catalog">Catalog</a>`
    : `<a href="/catalog">Catalog</a><a href="/login">Sign in</a>`;
  // sign-out is a same-origin POST (a link could be followed from any site)
  const who = user
    ? `<span class="who">${escapeHtml(user)} · <form class="signout" method="post" action="/logout"><button type="submit" class="link">Sign out</button></form></span>`
    : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Mini App Analytics</title><style>${STYLE}</style>${head}</head>
<body><header><div class="bar"><a class="brand" href="/">${LOGO} Mini App Analytics</a><nav>${nav}</nav>${who}</div></header>
<main>${body}</main></body></html>`;
}
