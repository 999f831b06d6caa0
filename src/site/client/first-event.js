// What an app with no event yet shows instead of a page of zeros: what is set up, the snippet to add (with a copy
// button), and that the page turns into the dashboard by itself when the first event arrives.
(() => {
  const { esc, code } = window.site;

  function step(done, html) {
    return (
      '<li class="' +
      (done ? 'done' : 'todo') +
      '"><span class="mark">' +
      (done ? '✓' : '•') +
      '</span><div>' +
      html +
      '</div></li>'
    );
  }

  /** the checklist for `app` (the dashboard's app document); `script`: the snippet template with placeholders */
  function render(app, script) {
    const domains = app.domains.map((domain) => '<b>' + esc(domain) + '</b>').join(', ');
    const refused = app.last_rejection;
    return (
      '<div class="card" id="first-event"><h2>Waiting for the first event of ' +
      esc(app.app_name) +
      '</h2><p class="muted" role="status">This page checks every few seconds and turns into the dashboard when the first event arrives.</p>' +
      (refused
        ? '<div class="notice bad">A request was refused: ' + esc(window.site.rejection(refused)) + '</div>'
        : '') +
      '<ol class="checklist">' +
      step(
        Boolean(app.token_prefix),
        app.token_prefix
          ? 'A token is issued (it starts with <code>' +
              esc(app.token_prefix) +
              '</code>). Lost it? “Regenerate” in <a href="/analytics">Analytics</a> or in the bot (the old one stops working).'
          : 'The token is revoked: issue a new one in <a href="/analytics">Analytics</a> or in the bot.',
      ) +
      step(
        app.domains.length > 0,
        'Your Mini App is served from ' +
          (domains || '<span class="bad">no domain</span>') +
          ': events from any other page are refused (add a domain in <a href="/analytics">Analytics</a>).',
      ) +
      step(
        false,
        'Add this to your Mini App’s page, with your token in place of <code>YOUR_TOKEN</code>:' +
          code(window.site.snippet(script, 'YOUR_TOKEN', app.app_name)),
      ) +
      step(
        Boolean(app.bot_id),
        app.bot_id
          ? 'The bot id is set: Telegram’s signature on each launch is checked, and verified users counted.'
          : 'Set the bot id in <a href="/analytics">Analytics</a> (the number before “:” in the token @BotFather gave): without it no launch verifies and the app stays out of the catalog.',
      ) +
      step(
        false,
        'Open your Mini App in Telegram. Its launch (<code>app-init</code>) arrives within seconds; with the first-event alert on, the bot tells you too.',
      ) +
      '</ol></div>'
    );
  }

  window.siteFirstEvent = { render };
})();
