// The per-app dashboard: the overview (headline figures and their changes), launches, daily users and sessions,
// events per day by name (uPlot), the wallet funnel, platforms / locales / start params, rejected requests, and live
// recent events, with contents to jump between them; an app with no event yet shows what to set up instead. The
// period and the filter come from the page's URL, so a shared link shows the same view.
(() => {
  const { api, esc, ago, utc, kpi, num, pct } = window.site;
  const root = document.getElementById('dashboard');
  const live = document.getElementById('live');
  const app = root.dataset.app;
  // a public read-only link reads its own API and shows the numbers only: no refusals, events, export or insights
  const shared = root.dataset.api !== undefined;
  const base = shared ? root.dataset.api : '/api/apps/' + encodeURIComponent(app);
  const period = document.getElementById('period');
  const filters = document.getElementById('filters');
  /** the filter's fields, as the page's form names them */
  const FILTER_KEYS = [...filters.elements].map((element) => element.name).filter(Boolean);
  const insights = document.getElementById('insights');
  const narrow = matchMedia('(max-width: 600px)');
  let charts = [];
  /** the page polls often while the app waits for its first event */
  let waiting = false;
  /** the one pending retry after a failed load */
  let retrying;

  function bars(rows, valueKey, labelKey) {
    const max = Math.max(1, ...rows.map((r) => r[valueKey]));
    if (rows.length === 0) return '<p class="muted">No data in this period.</p>';
    return (
      '<table>' +
      rows
        .map(
          (r) =>
            '<tr><td>' +
            (r[labelKey] === '' ? '<span class="muted">(none)</span>' : esc(r[labelKey])) +
            '</td>' +
            '<td style="width:45%"><div class="bar-track"><div class="bar-fill" style="width:' +
            ((100 * r[valueKey]) / max).toFixed(1) +
            '%"></div></div></td>' +
            '<td class="num">' +
            num(r[valueKey]) +
            '</td></tr>',
        )
        .join('') +
      '</table>'
    );
  }

  // the launches Telegram signed and why the others did not verify; an app without its bot's id, what to do. Members
  // only: a public link's data has no launch checks.
  function launchesCard(data) {
    const checks = data.launch_checks;
    if (!checks) return '';
    if (!data.app.bot_id)
      return (
        '<div class="card warn" id="launches" data-section="Launches"><b>No launch can be verified:</b> this app has no bot id, so no user counts as verified and ' +
        'the app stays out of the catalog. Set it in <a href="/analytics">Analytics</a> (“Bot id”): the number before “:” in the ' +
        'token @BotFather gave (only that number). The grammY middleware also reports it with a server key.</div>'
      );
    const reasons = checks.unverified
      .map((r) => '<tr><td>' + esc(r.text) + '</td><td class="num">' + num(r.launches) + '</td></tr>')
      .join('');
    return (
      '<div class="card" id="launches" data-section="Launches"><h2>Launches Telegram signed</h2><p>' +
      num(checks.outcomes.verified) +
      ' of ' +
      num(checks.launches) +
      ' launches in this period verified (' +
      num(checks.verified_users) +
      (checks.verified_users === 1 ? ' user' : ' users') +
      '). Only verified users count in the catalog.</p>' +
      (reasons
        ? '<table><tr><th>Not verified: the launch</th><th class="num">Launches</th></tr>' + reasons + '</table>'
        : '') +
      (checks.outcomes.no_proof > 0
        ? '<p class="muted">The official @telegram-apps/analytics client never sends the launch data: use this service\'s script or package.</p>'
        : '') +
      '</div>'
    );
  }

  /** the filter's fields that are set */
  const filtersSet = () => FILTER_KEYS.filter((key) => filters.elements[key].value.trim() !== '');

  /** an app with no event at all, unfiltered: what to set up, polled until the first event arrives */
  function renderWaiting(data) {
    charts.forEach((c) => c.destroy());
    charts = [];
    root.innerHTML = window.siteFirstEvent.render(data.app, root.dataset.script);
    live.innerHTML = '';
    insights.hidden = true;
    // nothing to filter yet
    document.getElementById('filter-panel').hidden = true;
    listSections();
  }

  function render(data) {
    charts.forEach((c) => c.destroy());
    charts = [];
    if (insights) insights.hidden = false;
    document.getElementById('filter-panel').hidden = false;
    const a = data.app;
    const today = data.days[data.days.length - 1];
    const lastRejection = data.rejections[0];
    root.innerHTML =
      '<div class="card" id="overview" data-section="Overview"><h2>Overview</h2><p class="muted">Loading…</p></div>' +
      (site.rejectedAfter(lastRejection, a.last_event_at)
        ? '<div class="card warn">⚠️ Requests were rejected after the last stored event: ' +
          esc(site.rejection(lastRejection)) +
          '</div>'
        : '') +
      '<div class="kpis">' +
      kpi('Events', num(data.totals.events)) +
      kpi('Users', num(data.totals.users)) +
      kpi('Verified users', num(data.totals.verifiedUsers)) +
      kpi('Sessions', num(data.totals.sessions)) +
      kpi(
        today && today.complete === false ? 'Events today, so far' : 'Events on the last day',
        num(today ? today.events : 0),
      ) +
      kpi(
        'Last event',
        '<span class="small-value">' +
          (a.last_event_at ? esc(ago(a.last_event_at)) : '<span class="muted">none yet</span>') +
          '</span>',
      ) +
      '</div>' +
      launchesCard(data) +
      '<div class="grid" id="traffic" data-section="Traffic"><div class="card"><div id="chart-users" class="chart"></div></div><div class="card"><div id="chart-events" class="chart"></div></div></div>' +
      '<div class="grid">' +
      '<div class="card" id="wallet" data-section="Wallet funnel"><h2>Wallet funnel <span class="muted">(users)</span></h2><table><tr><th>Step</th><th class="num">Users</th><th class="num">From previous</th><th class="num">From start</th><th class="num hide-narrow">Events</th></tr>' +
      data.funnel
        .map(
          (f) =>
            '<tr><td>' +
            esc(f.name) +
            '</td><td class="num">' +
            num(f.users) +
            '</td><td class="num">' +
            pct(f.fromPrevious) +
            '</td><td class="num">' +
            pct(f.fromFirst) +
            '</td><td class="num hide-narrow">' +
            num(f.events) +
            '</td></tr>',
        )
        .join('') +
      '</table><p class="muted">A user counts at a step when they took it within ' +
      esc(data.funnelWindow) +
      ' of their first step, after every step before it: as the Funnel insight and the read API count it.</p></div>' +
      '<div class="card" id="event-names" data-section="Events"><h2>Events by name</h2>' +
      bars(data.eventNames, 'events', 'name') +
      '</div>' +
      '</div>' +
      '<div class="grid" id="audience" data-section="Audience">' +
      '<div class="card"><h2>Platforms <span class="muted">(sessions)</span></h2>' +
      bars(data.dimensions.platform, 'sessions', 'value') +
      '</div>' +
      '<div class="card"><h2>Languages</h2>' +
      bars(data.dimensions.locale, 'sessions', 'value') +
      '</div>' +
      '<div class="card"><h2>Start params</h2>' +
      bars(data.dimensions.start_param, 'sessions', 'value') +
      '</div>' +
      '</div>';
    // after the insight cards: what was refused, and the events as they arrive
    if (!shared)
      live.innerHTML =
        '<div class="card"><h2>Rejected requests</h2>' +
        (data.rejections.length === 0
          ? '<p class="muted">None recently.</p>'
          : '<table><tr><th>When</th><th>Status</th><th>Message</th><th class="hide-narrow">Origin</th><th class="num">Count</th></tr>' +
            data.rejections
              .map(
                (r) =>
                  '<tr><td>' +
                  esc(ago(r.at)) +
                  '</td><td>' +
                  r.status +
                  '</td><td>' +
                  esc(r.message) +
                  (r.reason ? '<br><span class="muted">' + esc(r.reason) + '</span>' : '') +
                  '</td><td class="mono hide-narrow">' +
                  esc(r.origin ?? '') +
                  '</td><td class="num">' +
                  r.count +
                  '</td></tr>',
              )
              .join('') +
            '</table>') +
        '</div>' +
        '<div class="card"><h2>Recent events <span class="muted">(live)</span></h2><div id="recent"><p class="muted">Loading…</p></div></div>';
    const names = data.eventNames.slice(0, 6).map((e) => e.name);
    const chart = window.siteCharts.daily;
    charts.push(
      chart(document.getElementById('chart-users'), 'Daily users and sessions', data.days, [
        { label: 'Users', values: data.days.map((d) => d.users) },
        { label: 'Sessions', values: data.days.map((d) => d.sessions) },
      ]),
    );
    charts.push(
      chart(
        document.getElementById('chart-events'),
        'Events per day',
        data.days,
        names.map((name) => ({ label: name, values: data.days.map((d) => d.byName[name] ?? 0) })),
      ),
    );
    loadRecent();
  }

  async function loadRecent() {
    const target = document.getElementById('recent');
    if (!target) return;
    try {
      const events = await api('GET', base + '/recent?' + viewQuery());
      target.innerHTML =
        events.length === 0
          ? '<p class="muted">No events yet. Open your mini app in Telegram: its app-init appears here within seconds.</p>'
          : '<table><tr><th>Received</th><th>Event</th><th class="hide-narrow">Platform</th><th class="hide-narrow">Session</th><th>Details</th></tr>' +
            events
              .map(
                (e) =>
                  '<tr><td class="nowrap" title="' +
                  esc(utc(e.receivedAt)) +
                  '">' +
                  esc(ago(e.receivedAt)) +
                  '</td><td>' +
                  esc(e.eventName) +
                  '</td><td class="hide-narrow">' +
                  esc(e.platform ?? '') +
                  '</td><td class="mono hide-narrow">' +
                  esc(e.sessionId.slice(0, 8)) +
                  '</td><td class="mono">' +
                  (Object.keys(e.props).length ? esc(JSON.stringify(e.props).slice(0, 120)) : '') +
                  '</td></tr>',
              )
              .join('') +
            '</table>';
    } catch (error) {
      target.innerHTML = '<p class="error">' + esc(error.message) + '</p>';
    }
  }

  /** the view in the URL: days and the filter's fields that are set */
  function viewFromUrl() {
    const query = new URLSearchParams(location.search);
    if (['7', '30', '90'].includes(query.get('days'))) period.value = query.get('days');
    for (const key of FILTER_KEYS) filters.elements[key].value = query.get(key) ?? '';
  }

  function viewQuery() {
    const query = new URLSearchParams({ days: period.value });
    for (const key of FILTER_KEYS) {
      const value = filters.elements[key].value.trim();
      if (value) query.set(key, value);
    }
    return query.toString();
  }

  /** known values of the launch dimensions, offered while typing a filter */
  function offer(dimensions) {
    const lists = { platform: dimensions.platform, language: dimensions.locale, campaign: dimensions.start_param };
    for (const [key, values] of Object.entries(lists))
      document.getElementById(key + '-values').innerHTML = values
        .filter((entry) => entry.value !== '')
        .map((entry) => '<option value="' + esc(entry.value) + '">')
        .join('');
  }

  /** the contents: a link to every part of the page marked data-section that shows */
  function listSections() {
    const nav = document.getElementById('sections');
    if (!nav) return;
    const parts = [...document.querySelectorAll('[data-section]')].filter(
      (part) => part.id && !part.hidden && part.closest('[hidden]') === null && part.textContent.trim() !== '',
    );
    nav.innerHTML = parts.map((part) => '<a href="#' + part.id + '">' + esc(part.dataset.section) + '</a>').join('');
    nav.hidden = parts.length < 2;
  }

  /** a table wider than its card scrolls inside it: the card says so (no page-wide scroll on a phone) */
  function markScrolling() {
    for (const card of document.querySelectorAll('main .card')) {
      const scrolls = card.scrollWidth > card.clientWidth + 1;
      card.classList.toggle('scrolls', scrolls);
      if (scrolls && !card.querySelector(':scope > .scroll-hint'))
        card.insertAdjacentHTML('beforeend', '<p class="scroll-hint">← Swipe the table to see every column →</p>');
    }
  }

  /** the filter folds on a phone unless one is set; its summary counts what is set */
  function showFilterState() {
    const set = filtersSet().length;
    document.getElementById('filter-count').textContent = set ? '(' + set + ' set)' : '';
    if (narrow.matches && set === 0) document.getElementById('filter-panel').open = false;
  }

  async function load() {
    const view = viewQuery();
    if (!shared) {
      document.getElementById('export-csv').href = base + '/export.csv?' + view;
      document.getElementById('export-ndjson').href = base + '/export.ndjson?' + view;
    }
    showFilterState();
    if (!shared) window.siteInsights.viewChanged(app, view);
    let data;
    try {
      data = await api('GET', base + '/dashboard?' + view);
      waiting = !shared && data.app.events_total === 0 && filtersSet().length === 0;
      if (waiting) return renderWaiting(data);
      render(data);
      offer(data.dimensions);
    } catch (error) {
      live.innerHTML = '';
      // a service that is starting or overloaded (503) is asked again by itself; the button asks at once
      const again = error.status === 503 || error.status === undefined;
      root.innerHTML =
        '<div class="card"><p class="error">' +
        esc(error.message) +
        '</p><p class="row"><button type="button" id="retry">Try again</button>' +
        (again ? '<span class="muted">Trying again in a few seconds…</span>' : '') +
        (shared ? '' : '<a href="/analytics">Back to your apps</a>') +
        '</p></div>';
      document.getElementById('retry').addEventListener('click', load);
      clearTimeout(retrying);
      if (again) retrying = setTimeout(load, 5000);
      return;
    }
    await Promise.all([
      loadOverview(view, data.days),
      shared
        ? null
        : window.siteInsights.load(
            app,
            view,
            data.eventNames.map((entry) => entry.name),
          ),
    ]);
    listSections();
    markScrolling();
  }

  /** the overview's figures, read after the dashboard's (see the route) */
  async function loadOverview(view, days) {
    const target = document.getElementById('overview');
    try {
      window.siteOverview.render(target, await api('GET', base + '/overview?' + view), days);
    } catch (error) {
      target.innerHTML = '<h2>Overview</h2><p class="error">' + esc(error.message) + '</p>';
    }
  }

  /** a changed view goes into the URL, with the funnel's steps kept (replacing the entry: back leaves the dashboard) */
  function apply() {
    const query = new URLSearchParams(location.search);
    const view = new URLSearchParams(viewQuery());
    for (const key of ['days', ...FILTER_KEYS]) {
      if (view.has(key)) query.set(key, view.get(key));
      else query.delete(key);
    }
    history.replaceState(null, '', location.pathname + '?' + query);
    load();
  }

  viewFromUrl();
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    apply();
  });
  document.getElementById('clear-filters').addEventListener('click', () => {
    for (const key of FILTER_KEYS) filters.elements[key].value = '';
    apply();
  });
  period.addEventListener('change', apply);
  addEventListener('resize', markScrolling);
  load();
  // while the app waits for its first event the page looks every few seconds, then every minute
  let sinceLoad = 0;
  setInterval(() => {
    sinceLoad += 5;
    if (waiting || sinceLoad >= 60) {
      sinceLoad = 0;
      load();
    } else loadRecent();
  }, 5000);
})();
