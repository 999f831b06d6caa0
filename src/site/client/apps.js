// The Analytics section: my apps (owned, or joined as a member) with last event time and last rejection, the
// actions the user's role allows (the API is what enforces), the team; new token.
(() => {
  const { api, esc, ago, utc, made } = window.site;
  const list = document.getElementById('apps');
  const all = list.dataset.all === '1';

  // what each role may do, as src/tokens/policy.ts decides it: hidden buttons only spare a refusal
  const edits = (app) => app.role !== 'viewer';
  const owns = (app) => app.role === 'owner' || app.role === 'administrator';

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
          (app.domains.length > 1 && edits(app)
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
      (app.bot_id ? ' · id ' + esc(app.bot_id) : '') +
      '</span>' +
      (app.role === 'owner' ? '' : '<span class="chip">' + esc(app.role) + '</span>') +
      '<span class="mono muted" style="margin-left:auto">' +
      (app.token_prefix ? esc(app.token_prefix) + '…' : '<span class="bad">token revoked</span>') +
      '</span></div>' +
      '<div>Last event: ' +
      lastEvent(app) +
      '</div>' +
      rejected +
      (app.bot_id
        ? ''
        : '<div class="warn">⚠️ No bot id: launches cannot be verified, so no user counts as verified and the app ' +
          'stays out of the catalog.' +
          (edits(app) ? ' <button class="secondary small" data-action="bot-id">Set the bot id</button>' : '') +
          '</div>') +
      '<div class="row">' +
      domains +
      (edits(app) ? ' <button class="secondary small" data-action="add-domain">+ domain</button>' : '') +
      '</div>' +
      '<div class="row"><a class="button small" href="/analytics/' +
      encodeURIComponent(app.app_name) +
      '">Dashboard</a>' +
      (edits(app)
        ? '<button class="secondary small" data-action="regenerate">Regenerate token</button>' +
          (app.bot_id
            ? '<button class="secondary small" data-action="bot-id" data-current="' +
              esc(app.bot_id) +
              '">Bot id</button>'
            : '') +
          (app.token_prefix ? '<button class="secondary small" data-action="revoke">Revoke</button>' : '') +
          '<button class="secondary small" data-action="catalog" data-listed="' +
          app.catalog_listed +
          '">' +
          (app.catalog_listed ? 'Take out of the catalog' : 'List in the catalog') +
          '</button>' +
          '<button class="secondary small" data-action="read-keys">Read API keys</button>' +
          '<button class="secondary small" data-action="server-keys">Server keys</button>' +
          '<button class="secondary small" data-action="team">Team</button>'
        : '') +
      (owns(app) ? '<button class="danger small" data-action="delete">Delete</button>' : '') +
      (app.role === 'editor' || app.role === 'viewer'
        ? '<button class="secondary small" data-action="leave">Leave</button>'
        : '') +
      '</div><div class="team" hidden></div></div>'
    );
  }

  // the team of one app, inside its item: members with their roles; the owner invites, removes and hands over
  async function showTeam(item, path) {
    const team = await api('GET', path + '/members');
    const owner = team.role === 'owner' || team.role === 'administrator';
    const box = item.querySelector('.team');
    box.hidden = false;
    box.innerHTML =
      '<h3>Team</h3>' +
      team.members
        .map(
          (member) =>
            '<div class="row"><span>' +
            esc(member.name || (member.role === 'owner' ? 'owner' : member.ref)) +
            (member.you ? ' (you)' : '') +
            '</span><span class="chip">' +
            esc(member.role) +
            '</span>' +
            (owner && member.role !== 'owner'
              ? '<button class="secondary small" data-action="transfer" data-ref="' +
                esc(member.ref) +
                '">Make owner</button><button class="danger small" data-action="remove-member" data-ref="' +
                esc(member.ref) +
                '" data-made="' +
                esc(made(member.made)) +
                '">Remove</button>'
              : '') +
            '</div>',
        )
        .join('') +
      (owner
        ? '<div class="row"><button class="small" data-action="invite" data-role="viewer">Invite a viewer</button>' +
          '<button class="small" data-action="invite" data-role="editor">Invite an editor</button></div>' +
          '<div class="invite"></div>'
        : '');
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
      '<p>Script tag:</p>' +
      site.code(snippet(issued.dataset.script)) +
      '<p>Or the package, installed from this service:</p>' +
      site.code(snippet(issued.dataset.install)) +
      site.code(snippet(issued.dataset.package)) +
      '</div>';
    issued.scrollIntoView({ behavior: 'smooth' });
  }

  list.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const item = button.closest('.app-item');
    const name = item.dataset.app;
    const path = '/api/apps/' + encodeURIComponent(name);
    try {
      switch (button.dataset.action) {
        case 'read-keys':
          // its own card (read-keys.js); nothing here changed
          return site.openReadKeys(name);
        case 'server-keys':
          return site.openServerKeys(name);
        case 'team':
          return await showTeam(item, path);
        case 'invite': {
          const invite = await api('POST', path + '/invites', { role: button.dataset.role });
          item.querySelector('.invite').innerHTML =
            '<p>Send this to the person you invite as ' +
            esc(invite.role) +
            ' (it works once, until ' +
            esc(utc(invite.expires_at)) +
            '):</p><pre class="mono">' +
            esc(invite.link || invite.start) +
            '</pre>';
          return;
        }
        case 'remove-member':
          if (
            !confirm(
              'Remove this member from ' +
                name +
                '?' +
                (button.dataset.made ? ' It also revokes ' + button.dataset.made + ' they made.' : ''),
            )
          )
            return;
          await api('DELETE', path + '/members/' + encodeURIComponent(button.dataset.ref));
          return await showTeam(item, path);
        case 'transfer':
          if (!confirm('Hand ' + name + ' over to this member? They become its owner and you an editor.')) return;
          await api('POST', path + '/transfer', { ref: button.dataset.ref });
          break;
        case 'leave':
          if (
            !confirm(
              'Leave the team of ' +
                name +
                '? Only a new invite brings you back, and the read keys, server keys and public link you made are revoked.',
            )
          )
            return;
          await api('DELETE', path + '/members/me');
          break;
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
        case 'bot-id': {
          const botId = prompt(
            'The id of ' +
              name +
              '\'s bot: the number before ":" in the token @BotFather gave (only that number, never the token).' +
              ' Empty: no bot id.',
            button.dataset.current || '',
          );
          if (botId === null) return;
          await api('POST', path + '/bot-id', { bot_id: botId.trim() === '' ? null : botId.trim() });
          break;
        }
        case 'catalog':
          await api('POST', path + '/catalog', { catalog_listed: button.dataset.listed !== 'true' });
          break;
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
        bot_id: form.bot_id.value,
        domain: form.domain.value,
        app_name: form.app_name.value,
        catalog_listed: form.catalog_listed.checked,
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
  // an open team (an invite link being copied) is not redrawn under the user
  setInterval(() => list.querySelector('.team:not([hidden])') || load(), 15000);
})();
