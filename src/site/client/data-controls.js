// The app page's data controls card (owners and administrators): the retention period and erasing one user's data,
// through the site API.
(() => {
  const { api, esc, num } = window.site;
  const card = document.getElementById('data-controls');
  const app = card.dataset.app;
  const path = '/api/apps/' + encodeURIComponent(app);
  const label = (days) => (days === null ? 'Forever' : days === 365 ? '1 year' : days + ' days');
  const counted = (n, what) => num(n) + ' ' + what + (n === 1 ? '' : 's');
  /** the retention in force: only a change that keeps less (and so deletes) is asked first */
  let current = null;

  function render(controls) {
    current = controls.retention_days;
    const options = controls.retention_choices
      .map(
        (days) =>
          '<option value="' +
          (days === null ? 'forever' : days) +
          '"' +
          (days === controls.retention_days ? ' selected' : '') +
          '>' +
          esc(label(days)) +
          '</option>',
      )
      .join('');
    card.innerHTML =
      '<h2>Data controls</h2>' +
      '<form id="retention" class="stack"><label>Keep events <select name="days">' +
      options +
      '</select></label>' +
      '<p class="muted">Events, sessions and per-user rows older than the period are deleted every hour. Daily totals (events, users and sessions per day, dimensions, custom event counts) stay.</p>' +
      '<p class="error" id="retention-error" role="alert"></p><p id="retention-done" role="status"></p>' +
      '<button type="submit">Save retention</button></form>' +
      '<form id="erase-user" class="stack"><label>Erase a user\u2019s data: Telegram user id <input name="telegram_user_id" inputmode="numeric" pattern="[1-9][0-9]{0,19}" required autocomplete="off"></label>' +
      '<p class="muted">Deletes every event of this user in the app, their sessions and per-user rows (a data protection request). Daily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent (a start_param, a custom event name or value) is deleted too.</p>' +
      '<p class="error" id="erase-error" role="alert"></p><p id="erase-done" role="status"></p>' +
      '<button type="submit" class="danger">Erase this user\u2019s data</button></form>';
    card.hidden = false;
  }

  card.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const error = form.querySelector('.error');
    const done = form.querySelector('[role="status"]');
    error.textContent = '';
    done.textContent = '';
    try {
      if (form.id === 'retention') {
        const days = form.days.value;
        const keepsLess = days !== 'forever' && (current === null || Number(days) < current);
        if (
          keepsLess &&
          !confirm('Delete the events of ' + app + ' older than ' + label(Number(days)) + '? This cannot be undone.')
        )
          return;
        const saved = await api('POST', path + '/retention', { days });
        current = saved.retention_days;
        done.textContent =
          'Events are kept ' +
          (saved.retention_days === null ? 'forever.' : 'for ' + label(saved.retention_days) + '.');
      } else {
        if (!confirm('Erase every event and per-user row of this user from ' + app + '? This cannot be undone.'))
          return;
        const erased = await api('POST', path + '/users/erase', {
          telegram_user_id: form.telegram_user_id.value.trim(),
        });
        form.reset();
        const d = erased.deleted;
        done.textContent =
          'Erased the user (reference in the audit log: ' +
          erased.user +
          '): ' +
          [counted(d.events, 'event'), counted(d.daily_sessions, 'session'), counted(d.daily_users, 'active day')].join(
            ', ',
          ) +
          '.' +
          (erased.complete ? '' : ' Their events kept arriving meanwhile: erase again to remove what was stored.');
      }
    } catch (failure) {
      error.textContent = failure.message;
    }
  });

  // shown to whoever may manage the app (its owner, an administrator); for anyone else the API answers 404
  // only the owner (or an administrator) changes what is kept: members do not get the card (the API refuses them)
  Promise.all([api('GET', path), api('GET', path + '/data-controls')]).then(
    ([summary, controls]) => (summary.role === 'owner' || summary.role === 'administrator') && render(controls),
    () => undefined,
  );
})();
