// The per-app dashboard: KPIs, daily users and sessions, events per day by name (uPlot), the wallet
// funnel, platforms / locales / start params, rejected requests, and live recent events; the period and the
// filter come from the page's URL, so a shared link shows the same view.
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
  const COLORS = ['#2481cc', '#e8590c', '#2f9e44', '#9c36b5', '#c2255c', '#1098ad', '#f08c00', '#5c7cfa'];
  let charts = [];

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

  // A day still under way (today, UTC) is drawn apart, dashed from the day before, so a partial day never reads as a
  // drop; complete days keep the solid line.
  function chart(element, title, days, series) {
    const width = Math.max(280, element.clientWidth - 4);
    const xs = days.map((d) => Date.parse(d.day) / 1000);
    const style = getComputedStyle(document.body);
    const text = style.color;
    const line = style.getPropertyValue('--line').trim() || '#e4e7ec';
    const axis = { stroke: text, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
    const open = days.length > 1 && days[days.length - 1].complete === false;
    const solid = series.map((s) => (open ? s.values.slice(0, -1).concat([null]) : s.values));
    const partial = open
      ? series.map((s) => s.values.map((value, index) => (index >= s.values.length - 2 ? value : null)))
      : [];
    return new uPlot(
      {
        title,
        width,
        height: 240,
        legend: { live: false },
        scales: { x: { time: true } },
        axes: [axis, axis],
        series: [{}]
          .concat(
            series.map((s, i) => ({
              label: s.label,
              stroke: COLORS[i % COLORS.length],
              width: 2,
              points: { show: days.length < 40 },
            })),
          )
          .concat(
            partial.map((_, i) => ({
              label: series[i].label + ' (today, so far)',
              stroke: COLORS[i % COLORS.length],
              width: 2,
              dash: [5, 5],
              points: { show: days.length < 40 },
            })),
          ),
      },
      [xs].concat(solid, partial),
      element,
    );
  }

  // the launches Telegram signed and why the others did not verify; an app without its bot's id, what to do. Members
  // only: a public link's data has no launch checks.
  function launchesCard(data) {
    const checks = data.launch_checks;
    if (!checks) return '';
    if (!data.app.bot_id)
      return (
        '<div class="card warn" id="launches"><b>No launch can be verified:</b> this app has no bot id, so no user counts as verified and ' +
        'the app stays out of the catalog. Set it in <a href="/analytics">Analytics</a> (“Bot id”): the number before “:” in the ' +
        'token @BotFather gave (only that number). The grammY middleware also reports it with a server key.</div>'
      );
    const reasons = checks.unverified
      .map((r) => '<tr><td>' + esc(r.text) + '</td><td class="num">' + num(r.launches) + '</td></tr>')
      .join('');
    return (
      '<div class="card" id="launches"><h2>Launches Telegram signed</h2><p>' +
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

  function render(data) {
    charts.forEach((c) => c.destroy());
    charts = [];
    const a = data.app;
    const today = data.days[data.days.length - 1];
    const lastRejection = data.rejections[0];
    root.innerHTML =
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
      (site.rejectedAfter(lastRejection, a.last_event_at)
        ? '<div class="card warn">⚠️ Requests were rejected after the last stored event: ' +
          esc(site.rejection(lastRejection)) +
          '</div>'
        : '') +
      launchesCard(data) +
      '<div class="grid"><div class="card"><div id="chart-users" class="chart"></div></div><div class="card"><div id="chart-events" class="chart"></div></div></div>' +
      '<div class="grid">' +
      '<div class="card"><h2>Wallet funnel <span class="muted">(users)</span></h2><table><tr><th>Step</th><th class="num">Users</th><th class="num">From previous</th><th class="num">From start</th><th class="num hide-narrow">Events</th></tr>' +
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
      '<div class="card"><h2>Events by name</h2>' +
      bars(data.eventNames, 'events', 'name') +
      '</div>' +
      '</div>' +
      '<div class="grid">' +
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

  async function load() {
    const view = viewQuery();
    if (!shared) {
      document.getElementById('export-csv').href = base + '/export.csv?' + view;
      document.getElementById('export-ndjson').href = base + '/export.ndjson?' + view;
    }
    try {
      const data = await api('GET', base + '/dashboard?' + view);
      render(data);
      offer(data.dimensions);
    } catch (error) {
      live.innerHTML = '';
      root.innerHTML =
        '<div class="card"><p class="error">' +
        esc(error.message) +
        '</p>' +
        (shared ? '' : '<p><a href="/analytics">Back to your apps</a></p>') +
        '</div>';
      return;
    }
    if (!shared) window.siteInsights.load(app, view);
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
  load();
  setInterval(loadRecent, 5000);
  setInterval(load, 60000);
})();
