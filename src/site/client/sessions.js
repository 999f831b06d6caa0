// The administrator's sessions card: ends every session of a Telegram user through the site API.
(() => {
  const { api } = window.site;
  const form = document.getElementById('end-sessions');
  const error = document.getElementById('end-sessions-error');
  const done = document.getElementById('end-sessions-done');

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    done.textContent = '';
    const telegramId = form.telegram_id.value.trim();
    if (!confirm('End every session of Telegram user ' + telegramId + '?')) return;
    try {
      const result = await api('POST', '/api/sessions/end', { telegram_id: telegramId });
      done.textContent = result.ended === 1 ? 'Ended 1 session.' : 'Ended ' + result.ended + ' sessions.';
      form.reset();
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
})();
