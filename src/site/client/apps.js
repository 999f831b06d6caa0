// The Analytics section: my apps with last event time and last rejection, and their actions; new token.
(() => {
  const { api, esc, ago, utc } = window.site;
  const list = document.getElementById('apps');
  const all = list.dataset.all === '1';

  function lastEvent(app) {
    return app.last_event_at
      ? esc(ago(app.last_event_at)) + ' <span class="muted">(' + esc(utc(app.last_event_at)) + ')</span>'
      : '<span class="muted">no events yet</span>';
  }

  function item(app) {
    const rejected = site.rejectedAfter(app.last_rejection, app.last_event_at)
      ? '<div class="warn">⚠️ Last rejected request: ' + esc(site.rejection(app.last_rejection)) + '</div>'
      : '';
    const domains = app.domains
      .map(
        (d) =>
          '<span class="chip mono">' +
          esc(d) +
          (app.domains.length > 1
            ? ' <button class="link" data-action="remove-domain" data-domain="' +
              esc(d) +
              '" title="Remove ' +
              esc(d) +
              '">✕</button>'
            : '') +
          '</span>',
      )
      .join(' ');
    return (
      '<div class="app-item" data-app="' +
      esc(app.app_name) +
      '">' +
      '<div class="row"><a href="/analytics/' +
      encodeURIComponent(app.app_name) +
      '"><b>' +
      esc(app.app_name) +
      '</b></a><span class="muted">' +
      esc(app.bot) +
      '</span>' +
      '<span class="mono muted" style="margin-left:auto">' +
      (app.token_prefix ? esc(app.token_prefix) + '…' : '<span class="bad">token revoked</span>') +
      '</span></div>' +
      '<div>Last event: ' +
      lastEvent(app) +
      '</div>' +
      rejected +
      '<div class="row">' +
      domains +
      ' <button class="secondary small" data-action="add-domain">+ domain</button></div>' +
      '<div class="row"><a class="button small" href="/analytics/' +
      encodeURIComponent(app.app_name) +
      '">Dashboard</a>' +
      '<button class="secondary small" data-action="regenerate">Regenerate token</button>' +
      (app.token_prefix ? '<button class="secondary small" data-action="revoke">Revoke</button>' : '') +
      '<button class="secondary small" data-action="read-keys">Read API keys</button>' +
      '<button class="secondary small" data-action="server-keys">Server keys</button>' +
      '<button class="danger small" data-action="delete">Delete</button></div></div>'
    );
  }

  async function load() {
    try {
      const apps = await api('GET', '/api/apps' + (all ? '?all=1' : ''));
      list.innerHTML =
        apps.length === 0 ? '<p class="muted">No apps yet: create a token below.</p>' : apps.map(item).join('');
    } catch (error) {
      list.innerHTML = '<p class="error">' + esc(error.message) + '</p>';
    }
  }

  function showToken(result, title) {
    const issued = document.getElementById('issued');
    const snippet = (template) => site.snippet(template, result.token, result.app_name);
    issued.innerHTML =
      '<div class="notice"><p><b>' +
      esc(title) +
      '</b> Your token is shown only once:</p>' +
      '<pre class="mono" id="token">' +
      esc(result.token) +
      '</pre>' +
      '<p>Script tag:</p><pre>' +
      esc(snippet(issued.dataset.script)) +
      '</pre>' +
      '<p>Or the package, installed from this service:</p><pre>' +
      esc(snippet(issued.dataset.install)) +
      '</pre><pre>' +
      esc(snippet(issued.dataset.package)) +
      '</pre></div>';
    issued.scrollIntoView({ behavior: 'smooth' });
  }

  list.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const name = button.closest('.app-item').dataset.app;
    const path = '/api/apps/' + encodeURIComponent(name);
    try {
      switch (button.dataset.action) {
        case 'read-keys':
          // its own card (read-keys.js); nothing here changed
          return site.openReadKeys(name);
        case 'server-keys':
          return site.openServerKeys(name);
        case 'revoke':
          if (!confirm('Revoke the token of ' + name + '? Events sent with it will be refused.')) return;
          await api('POST', path + '/revoke', {});
          break;
        case 'regenerate':
          if (!confirm('Issue a new token for ' + name + '? The current one stops working within seconds.')) return;
          showToken(await api('POST', path + '/regenerate', {}), 'New token for ' + name + '.');
          break;
        case 'delete':
          if (!confirm('Delete ' + name + ' with its token and all its events? This cannot be undone.')) return;
          await api('DELETE', path);
          break;
        case 'add-domain': {
          const domain = prompt('Domain to add to ' + name + ':');
          if (!domain) return;
          await api('POST', path + '/domains', { add: domain });
          break;
        }
        case 'remove-domain':
          if (!confirm('Remove ' + button.dataset.domain + ' from ' + name + '? Events sent from it will be refused.'))
            return;
          await api('POST', path + '/domains', { remove: button.dataset.domain });
          break;
      }
      await load();
    } catch (error) {
      alert(error.message);
    }
  });

  document.getElementById('create').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const error = document.getElementById('create-error');
    error.textContent = '';
    try {
      const result = await api('POST', '/api/apps', {
        bot: form.bot.value,
        domain: form.domain.value,
        app_name: form.app_name.value,
      });
      form.reset();
      showToken(result, result.app_name + ' is registered.');
      await load();
    } catch (failure) {
      error.textContent = failure.message;
      if (failure.field && form[failure.field]) form[failure.field].focus();
    }
  });

  load();
  setInterval(load, 15000);
})();
