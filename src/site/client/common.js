// Browser helpers shared by the site's pages: JSON API calls, HTML escaping, times and numbers.
window.site = {
  async api(method, path, body) {
    const response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
    if (response.status === 401)
      location.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
    // a proxy's or a starting service's answer may be no JSON at all
    const data = response.status === 204 ? null : await response.json().catch(() => null);
    if (!response.ok)
      throw Object.assign(
        new Error(data?.message ? data.message : 'The service answered ' + response.status + '. Try again shortly.'),
        { field: data?.field, status: response.status },
      );
    return data;
  },
  esc(text) {
    return String(text ?? '').replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
    );
  },
  ago(iso) {
    const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (seconds < 5) return 'just now';
    const units = [
      [31536000, 'year'],
      [2592000, 'month'],
      [86400, 'day'],
      [3600, 'hour'],
      [60, 'minute'],
      [1, 'second'],
    ];
    for (const [size, unit] of units)
      if (seconds >= size) {
        const n = Math.floor(seconds / size);
        return n + ' ' + unit + (n === 1 ? '' : 's') + ' ago';
      }
    return 'just now';
  },
  utc(iso) {
    return new Date(iso).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  },
  /** who made a key or link, as the API's made_by tells (src/tokens/makers.ts makerText) */
  maker(made) {
    if (made.role === 'operator') return 'the operator';
    if (made.role === 'unknown') return 'unknown';
    const what = made.role === 'former' ? 'not in the team' : made.role;
    return (made.name || made.ref) + ' (' + what + (made.name ? ', ' + made.ref : '') + ')';
  },
  /** "the 2 keys and the public link" a member made, or '' (src/tokens/members.ts madeText) */
  made(made) {
    const parts = [];
    if (made.keys > 0) parts.push(made.keys === 1 ? 'the key' : 'the ' + made.keys + ' keys');
    if (made.share_link) parts.push('the public link');
    return parts.join(' and ');
  },
  /** one key figure; `value` is HTML */
  kpi(label, value) {
    return (
      '<div class="kpi"><div class="label">' + site.esc(label) + '</div><div class="value">' + value + '</div></div>'
    );
  },
  num(value) {
    return Number(value).toLocaleString('en-US');
  },
  pct(value) {
    return value === null ? '—' : (value * 100).toFixed(1) + '%';
  },
  // the owner is warned of a refused request only when it came after the last stored event (ISO times compare as text)
  rejectedAfter(rejection, lastEventAt) {
    return Boolean(rejection && (!lastEventAt || rejection.at > lastEventAt));
  },
  // the page's snippet templates (src/sdk-serving/integration-snippet.ts) with the service's address (PUBLIC_URL, as the bot's
  // snippets name it; else the page's origin), the token and the app name
  snippet(template, token, appName) {
    const base = document.body.dataset.base || location.origin;
    return template.split('$BASE').join(base).split('$TOKEN').join(token).split('$APP_NAME').join(appName);
  },
  /** a block of code to paste, kept whole on its lines (it scrolls), with a Copy button; `text` is plain text */
  code(text) {
    return (
      '<div class="code"><pre>' +
      site.esc(text) +
      '</pre><button type="button" class="secondary small copy" data-copy>Copy</button></div>'
    );
  },
  rejection(r) {
    // a refusal the service explains itself (a daily quota reached) tells that rather than the spec's message
    return r.status + ' ' + (r.reason || r.message) + (r.origin ? ' from ' + r.origin : '') + ', ' + site.ago(r.at);
  },
};

// a Copy button copies the code block it sits in, and says so
document.addEventListener('click', async (event) => {
  const button = event.target.closest?.('button[data-copy]');
  if (!button) return;
  const text = button.parentElement.querySelector('pre').textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    // no clipboard (an http page, a refused permission): the text is selected for the person to copy
    getSelection().selectAllChildren(button.parentElement.querySelector('pre'));
    button.textContent = 'Selected: copy it';
  }
  setTimeout(() => {
    button.textContent = 'Copy';
  }, 2000);
});
