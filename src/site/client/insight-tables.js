// The insight cards' tables and figures from the numbers the insights API gives: D-day retention, the cohort grid, a
// funnel's steps, custom events, campaigns and revenue. insights.js loads the numbers and places what these draw.
(() => {
  const { esc, kpi, num, pct } = window.site;
  /** days after the first a cohort grid shows, as far as the period reaches */
  const GRID_DAYS = [1, 2, 3, 7, 14, 30, 60, 90];

  const ratio = (part, whole) => (whole > 0 ? part / whole : null);

  /** retention on day k over the cohorts followed that far */
  // day k's retention of the cohorts whose day k is over (a cell on today is still growing: never a figure)
  function retention(cohorts, k) {
    const followed = cohorts.filter((cohort) => cohort.retained.length > k && !(cohort.complete <= k));
    const users = followed.reduce((sum, cohort) => sum + cohort.users, 0);
    return ratio(
      followed.reduce((sum, cohort) => sum + cohort.retained[k], 0),
      users,
    );
  }

  /** a cell's background on the grid's heat scale: the accent colour, stronger as more of the cohort came back */
  const heat = (share) =>
    'background:color-mix(in srgb,var(--accent) ' + Math.round((share ?? 0) * 55) + '%,transparent)';

  function cohortGrid(cohorts) {
    if (cohorts.length === 0) return '<p class="muted">No new users in this period.</p>';
    const reach = Math.max(...cohorts.map((cohort) => cohort.retained.length - 1));
    const days = GRID_DAYS.filter((day) => day <= reach);
    return (
      '<table class="cohorts"><tr><th>First day</th><th class="num">New users</th>' +
      days.map((day) => '<th class="num">D' + day + '</th>').join('') +
      '</tr>' +
      cohorts
        .map(
          (cohort) =>
            '<tr><td class="nowrap">' +
            esc(cohort.day) +
            '</td><td class="num">' +
            num(cohort.users) +
            '</td>' +
            days
              .map((day) =>
                day < cohort.retained.length && cohort.complete <= day
                  ? '<td class="num muted pending" title="today: still growing">…</td>'
                  : day < cohort.retained.length
                    ? '<td class="num heat" style="' +
                      heat(ratio(cohort.retained[day], cohort.users)) +
                      '" title="' +
                      num(cohort.retained[day]) +
                      ' users">' +
                      pct(ratio(cohort.retained[day], cohort.users)) +
                      '</td>'
                    : '<td class="num muted">·</td>',
              )
              .join('') +
            '</tr>',
        )
        .join('') +
      '</table>'
    );
  }

  function funnelTable(steps) {
    const first = steps[0] ? steps[0].count : 0;
    return (
      '<table><tr><th>Step</th><th class="num">Count</th><th class="num">From previous</th><th class="num">From first</th><th class="num hide-narrow">Median time</th></tr>' +
      steps
        .map(
          (step, index) =>
            '<tr><td>' +
            esc(step.name) +
            '</td><td class="num">' +
            num(step.count) +
            '</td><td class="num">' +
            (index === 0 ? '—' : pct(ratio(step.count, steps[index - 1].count))) +
            '</td><td class="num">' +
            (index === 0 ? '—' : pct(ratio(step.count, first))) +
            '</td><td class="num hide-narrow">' +
            (step.median_seconds_from_previous === null ? '—' : duration(step.median_seconds_from_previous)) +
            '</td></tr>',
        )
        .join('') +
      '</table>'
    );
  }

  function duration(seconds) {
    if (seconds < 90) return Math.round(seconds) + ' s';
    if (seconds < 5400) return Math.round(seconds / 60) + ' min';
    if (seconds < 129600) return (seconds / 3600).toFixed(1) + ' h';
    return (seconds / 86400).toFixed(1) + ' d';
  }

  function customEvents(events) {
    if (events.length === 0)
      return '<p class="muted">No custom events in this period. <code>trackEvent(name, data)</code> sends them.</p>';
    return (
      '<table><tr><th>Name</th><th class="num">Events</th><th class="num">Users</th></tr>' +
      events
        .map(
          (event) =>
            '<tr><td><button type="button" class="link custom-name" data-name="' +
            esc(event.name) +
            '">' +
            esc(event.name) +
            '</button>' +
            // its properties, each a button that shows the property's values
            (event.properties || [])
              .map(
                (property) =>
                  ' <button type="button" class="chip custom-property" data-name="' +
                  esc(event.name) +
                  '" data-property="' +
                  esc(property) +
                  '">' +
                  esc(property) +
                  '</button>',
              )
              .join('') +
            '</td><td class="num">' +
            num(event.count) +
            '</td><td class="num">' +
            num(event.users) +
            '</td></tr>',
        )
        .join('') +
      '</table>'
    );
  }

  function campaigns(list) {
    if (list.length === 0) return '<p class="muted">No new users arrived with a start_param in this period.</p>';
    return (
      '<table><tr><th>Campaign</th><th class="num">New users</th><th class="num">Back on day 7</th><th class="num">Wallet connected</th></tr>' +
      list
        .map(
          (campaign) =>
            '<tr><td class="mono">' +
            esc(campaign.start_param) +
            '</td><td class="num">' +
            num(campaign.new_users) +
            '</td><td class="num">' +
            num(campaign.retained_d7) +
            ' <span class="muted">(' +
            pct(ratio(campaign.retained_d7, campaign.new_users)) +
            ')</span></td><td class="num">' +
            num(campaign.wallet_connections) +
            ' <span class="muted">(' +
            pct(ratio(campaign.wallet_connections, campaign.new_users)) +
            ')</span></td></tr>',
        )
        .join('') +
      '</table>'
    );
  }

  // Stars paid less refunded per day, from its two sources, each named: what the app's bot confirmed (successful-payment
  // / refunded-payment) and what pages reported in sessions Telegram signed (purchase-success at its invoice's price,
  // unless the bot reported the same purchase); paying users and the conversion of the invoices opened in verified
  // sessions. What pages reported in sessions Telegram did not sign is shown apart, never added.
  function revenue(data) {
    const unverified = data.unverified || { stars: 0, payments: 0, purchase_success: 0 };
    const totals =
      '<div class="kpis">' +
      kpi('Stars (net)', num(data.stars)) +
      kpi('Paying users', num(data.paying_users)) +
      kpi('Purchases started → paid', num(data.purchase_init) + ' → ' + num(data.purchase_success)) +
      kpi('Conversion', data.conversion === null ? '–' : pct(data.conversion)) +
      '</div>' +
      '<p class="muted" id="revenue-sources">Stars paid: ' +
      num(data.stars_from_bot) +
      ' confirmed by the bot · ' +
      num(data.stars_from_mini_app) +
      ' reported by the Mini App in sessions Telegram signed (at the invoice price) · ' +
      num(data.stars_refunded) +
      ' refunded (from the bot).' +
      (data.purchase_success_unpriced > 0
        ? ' ' +
          num(data.purchase_success_unpriced) +
          ' paid purchases have no invoice registered in Stars (registerInvoice) and count without Stars.'
        : '') +
      '</p>' +
      (unverified.purchase_success > 0
        ? '<p class="warn" id="revenue-unverified">Not counted: pages in sessions Telegram did not sign reported ' +
          num(unverified.purchase_success) +
          (unverified.purchase_success === 1 ? ' purchase (' : ' purchases (') +
          num(unverified.stars) +
          " Stars at the invoice price). Anyone holding the app's public token can send those: they are shown, never added.</p>"
        : '');
    if (data.days.length === 0) return totals + '<p class="muted">No payments in this period.</p>';
    // a chart of the period's days (insights.js draws it), then each day with a payment, folded
    return (
      totals +
      '<div id="chart-revenue" class="chart"></div>' +
      '<details id="revenue-days"><summary>Each day with a payment (' +
      num(data.days.length) +
      ')</summary>' +
      '<table><tr><th>Day</th><th class="num">Stars</th><th class="num">from the bot</th><th class="num">from the Mini App</th><th class="num">Payments</th><th class="num">Refunds</th><th class="num">Paying users</th></tr>' +
      data.days
        .map(
          (day) =>
            '<tr><td>' +
            esc(day.day) +
            (day.complete === false ? ' <span class="muted">(today, so far)</span>' : '') +
            '</td><td class="num">' +
            num(day.stars) +
            '</td><td class="num">' +
            num(day.stars_from_bot) +
            '</td><td class="num">' +
            num(day.stars_from_mini_app) +
            '</td><td class="num">' +
            num(day.payments) +
            '</td><td class="num">' +
            num(day.refunds) +
            '</td><td class="num">' +
            num(day.paying_users) +
            '</td></tr>',
        )
        .join('') +
      '</table></details>'
    );
  }

  window.siteInsightTables = { ratio, retention, cohortGrid, funnelTable, customEvents, campaigns, revenue };
})();
