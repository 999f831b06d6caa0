// The dashboard's first screen: active users, new users, sessions, D1/D7 retention and revenue over the period, each
// with its change over the period's complete days against as many days just before, and one chart of the figure
// picked.
(() => {
  const { esc, num, pct } = window.site;
  const LABELS = {
    users: 'Active users',
    new_users: 'New users',
    sessions: 'Sessions',
    d1: 'D1 retention',
    d7: 'D7 retention',
    stars: 'Revenue (Stars)',
  };
  let picked = 'users';
  let chart = null;

  const shortDay = (day) =>
    new Date(day + 'T00:00:00Z').toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const span = (period) =>
    period.from === period.to ? shortDay(period.from) : shortDay(period.from) + ' – ' + shortDay(period.to);
  const shown = (figure, value) => (value === null ? '—' : figure.change_kind === 'points' ? pct(value) : num(value));

  function change(figure) {
    if (figure.change === null)
      return '<div class="change muted" title="nothing to compare with in the days before">no change to show</div>';
    const percent = Math.abs(figure.change * 100).toFixed(1);
    const arrow = figure.change > 0 ? '▲ +' : figure.change < 0 ? '▼ −' : '';
    const tone = figure.change > 0 ? 'good' : figure.change < 0 ? 'bad' : 'muted';
    return (
      '<div class="change ' +
      tone +
      '">' +
      arrow +
      percent +
      (figure.change_kind === 'points' ? ' pp' : '%') +
      ' <span class="muted">' +
      esc(shown(figure, figure.compared)) +
      ' vs ' +
      esc(shown(figure, figure.previous)) +
      '</span></div>'
    );
  }

  /** the picked figure's daily values: users and sessions from the dashboard's days, the rest from the headline's */
  function values(key, days, headlineDays) {
    if (key === 'users' || key === 'sessions') return days.map((d) => d[key]);
    const byDay = new Map(headlineDays.map((d) => [d.day, d]));
    return days.map((d) => (byDay.has(d.day) ? byDay.get(d.day)[key] : null));
  }

  function draw(headline, days) {
    chart?.destroy();
    const element = document.getElementById('chart-overview');
    const points = picked === 'd1' || picked === 'd7';
    chart = window.siteCharts.daily(
      element,
      LABELS[picked] + ' per day' + (points ? ' (by first day)' : ''),
      days,
      [{ label: LABELS[picked], values: values(picked, days, headline.days) }],
      points ? (value) => (value === null ? '—' : Math.round(value * 100) + '%') : undefined,
    );
  }

  /** fills the overview card; `days` are the dashboard's days (users, sessions, complete) */
  function render(target, headline, days) {
    if (!headline.figures.some((figure) => figure.key === picked)) picked = 'users';
    target.innerHTML =
      '<div class="row" style="justify-content:space-between"><h2 style="margin:0">Overview</h2><span class="muted small" id="overview-periods">Changes: ' +
      esc(span(headline.compared)) +
      ' vs ' +
      esc(span(headline.previous)) +
      (headline.today_left_out ? ' (today, still under way, is left out)' : '') +
      '</span></div>' +
      '<div class="headline" role="group" aria-label="Headline figures">' +
      headline.figures
        .map(
          (figure) =>
            '<button type="button" class="kpi pick" data-key="' +
            figure.key +
            '" aria-pressed="' +
            (figure.key === picked) +
            '"><div class="label">' +
            LABELS[figure.key] +
            '</div><div class="value">' +
            esc(shown(figure, figure.value)) +
            '</div>' +
            change(figure) +
            '</button>',
        )
        .join('') +
      '</div><div id="chart-overview" class="chart"></div>';
    target.querySelectorAll('button.pick').forEach((button) =>
      button.addEventListener('click', () => {
        picked = button.dataset.key;
        target
          .querySelectorAll('button.pick')
          .forEach((other) => other.setAttribute('aria-pressed', String(other === button)));
        draw(headline, days);
      }),
    );
    draw(headline, days);
  }

  window.siteOverview = { render, destroy: () => chart?.destroy() };
})();
