// The app page's public link card: make, replace or revoke the read-only link of the dashboard, through the site API.
(() => {
  const { api, esc, maker } = window.site;
  const card = document.getElementById('share');
  const path = '/api/apps/' + encodeURIComponent(card.dataset.app) + '/share';

  function render(state, made) {
    card.innerHTML =
      '<h2>Public link</h2>' +
      '<p class="muted">Anyone with the link sees this dashboard\u2019s numbers, without signing in; not the token, domains, refusals or events.</p>' +
      (made
        ? '<p>Copy it now, it is not shown again:</p><pre id="share-url">' + esc(made) + '</pre>'
        : state.link
          ? '<p>A link is active (<code>' +
            esc(state.link.prefix) +
            '…</code>), made by ' +
            esc(maker(state.link.made_by)) +
            '.</p>'
          : '<p>No link yet.</p>') +
      '<p class="error" role="alert"></p><p class="row"><button type="button" id="share-new">' +
      (state.link ? 'Replace the link' : 'Make a link') +
      '</button>' +
      (state.link ? '<button type="button" class="danger" id="share-revoke">Revoke the link</button>' : '') +
      '</p>';
    card.hidden = false;
  }

  card.addEventListener('click', async (event) => {
    const error = card.querySelector('.error');
    try {
      if (event.target.id === 'share-new') {
        const made = await api('POST', path, {});
        render(made, made.url.startsWith('/') ? location.origin + made.url : made.url);
      } else if (event.target.id === 'share-revoke') {
        if (!confirm('Revoke the public link? Whoever has it sees nothing any more.')) return;
        await api('DELETE', path);
        render({ link: null });
      }
    } catch (failure) {
      error.textContent = failure.message;
    }
  });

  api('GET', path).then(
    (state) => render(state),
    () => undefined,
  );
})();
