// The app page's alerts card: what the management bot tells the signed-in owner about the app, through the site API.
(() => {
  const { api, esc } = window.site;
  const card = document.getElementById('alerts');
  const path = '/api/apps/' + encodeURIComponent(card.dataset.app) + '/alerts';
  const FLAGS = [
    ['refusals', 'Refusal spikes (with a button to add a refused domain)'],
    ['quota', 'Daily quota reached'],
    ['first_event', 'First event after the token was issued'],
    ['digest', 'Weekly digest (Mondays)'],
  ];

  function render(settings) {
    const silence = settings.silence_choices
      .map(
        (hours) =>
          '<option value="' +
          (hours === null ? 'off' : hours) +
          '"' +
          (hours === settings.silence_hours ? ' selected' : '') +
          '>' +
          (hours === null ? 'Never' : esc(hours + ' h')) +
          '</option>',
      )
      .join('');
    card.innerHTML =
      '<h2>Alerts in Telegram</h2><form id="alert-settings" class="stack">' +
      '<label>Warn when no events arrive for <select name="silence_hours">' +
      silence +
      '</select></label>' +
      FLAGS.map(
        ([name, label]) =>
          '<label class="check"><input type="checkbox" name="' +
          name +
          '"' +
          (settings[name] ? ' checked' : '') +
          '> ' +
          esc(label) +
          '</label>',
      ).join('') +
      '<p class="muted">The management bot sends them to your private chat with it; each condition once, until it clears.</p>' +
      '<p class="error" role="alert"></p><p role="status"></p><button type="submit">Save alerts</button></form>';
    card.hidden = false;
  }

  card.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const [error, done] = [form.querySelector('.error'), form.querySelector('[role="status"]')];
    error.textContent = '';
    done.textContent = '';
    const body = { silence_hours: form.silence_hours.value === 'off' ? null : Number(form.silence_hours.value) };
    for (const [name] of FLAGS) body[name] = form[name].checked;
    try {
      render(await api('POST', path, body));
      card.querySelector('[role="status"]').textContent = 'Saved.';
    } catch (failure) {
      error.textContent = failure.message;
    }
  });

  // shown to whoever may manage the app; for anyone else the API answers 404
  api('GET', path).then(render, () => undefined);
})();
