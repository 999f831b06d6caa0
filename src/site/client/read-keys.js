// The read API keys and the server keys of one app in the Analytics section, one card each: its keys with Revoke, and
// "New read key" / "New server key" showing the key once.
function keysCard({ cards, one, noun, open }) {
  const { api, esc, utc, maker } = window.site;
  const card = document.getElementById(cards);
  const list = document.getElementById(cards + '-list');
  const issued = document.getElementById(one + '-issued');
  const error = document.getElementById(cards + '-error');
  let app = null;
  const path = () => '/api/apps/' + encodeURIComponent(app) + '/' + cards;

  function row(key) {
    return (
      '<tr><td class="mono">' +
      esc(key.prefix) +
      '…</td><td>' +
      esc(utc(key.created_at)) +
      '</td><td>' +
      esc(maker(key.made_by)) +
      '</td><td>' +
      (key.revoked_at
        ? '<span class="muted">revoked ' + esc(utc(key.revoked_at)) + '</span>'
        : '<button class="secondary small" data-prefix="' + esc(key.prefix) + '">Revoke</button>') +
      '</td></tr>'
    );
  }

  async function load() {
    const keys = await api('GET', path());
    list.innerHTML =
      keys.length === 0
        ? '<p class="muted">No ' + noun + 's yet.</p>'
        : '<table><thead><tr><th>Key</th><th>Created</th><th>Made by</th><th></th></tr></thead><tbody>' +
          keys.map(row).join('') +
          '</tbody></table>';
  }

  async function run(step) {
    error.textContent = '';
    try {
      await step();
    } catch (failure) {
      error.textContent = failure.message;
    }
  }

  // the app list (apps.js) opens this card for one app; its own refreshes leave the card alone
  site[open] = (name) => {
    app = name;
    document.getElementById(cards + '-app').textContent = name;
    issued.innerHTML = '';
    list.innerHTML = '<p class="muted">Loading…</p>';
    card.hidden = false;
    card.scrollIntoView({ behavior: 'smooth' });
    return run(load);
  };

  list.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-prefix]');
    if (!button) return;
    const prefix = button.dataset.prefix;
    if (!confirm('Revoke the ' + noun + ' ' + prefix + '… of ' + app + '? Requests with it are refused at once.'))
      return;
    run(async () => {
      await api('POST', path() + '/revoke', { prefix });
      // a key just issued and now revoked is of no use to copy
      if (issued.textContent.includes(prefix)) issued.innerHTML = '';
      await load();
    });
  });

  document.getElementById(one + '-new').addEventListener('click', () =>
    run(async () => {
      const created = await api('POST', path(), {});
      const fill = (template) => site.snippet(template, created.key, created.app_name);
      // a server key also comes with the grammY middleware's install line and two lines for the app's own bot
      const grammy = card.dataset.grammy
        ? '<p>In a grammY bot:</p><pre id="' +
          one +
          '-grammy-install">' +
          esc(fill(card.dataset.grammyInstall)) +
          '</pre><pre id="' +
          one +
          '-grammy">' +
          esc(fill(card.dataset.grammy)) +
          '</pre>'
        : '';
      issued.innerHTML =
        '<div class="notice"><p><b>New ' +
        noun +
        ' for ' +
        esc(created.app_name) +
        '.</b> It is shown only once:</p><pre class="mono" id="' +
        one +
        '">' +
        esc(created.key) +
        '</pre>' +
        grammy +
        '<p>Try it:</p><pre>' +
        esc(fill(card.dataset.try)) +
        '</pre></div>';
      await load();
    }),
  );

  document.getElementById(cards + '-close').addEventListener('click', () => {
    card.hidden = true;
    issued.innerHTML = '';
    app = null;
  });
}

keysCard({ cards: 'read-keys', one: 'read-key', noun: 'read key', open: 'openReadKeys' });
keysCard({ cards: 'server-keys', one: 'server-key', noun: 'server key', open: 'openServerKeys' });
