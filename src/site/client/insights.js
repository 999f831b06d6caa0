// The dashboard's insight cards: new users and D1/D7/D30 retention, the cohort grid, a funnel of the owner's own
// steps, custom events with the values of a property, and campaigns. They read the same numbers as the read API,
// for the dashboard's period and filter; the funnel's steps are kept in the URL with the rest of the view. The tables
// they show are drawn by insight-tables.js.
(() => {
  const { api, esc, num, pct } = window.site;
  const { ratio, retention, cohortGrid, funnelTable, customEvents, campaigns, revenue } = window.siteInsightTables;
  const target = document.getElementById('insights');
  /** the funnel shown when the URL names none: the app's default one, as the page gives it */
  const DEFAULT_FUNNEL = JSON.parse(target.dataset.defaultFunnel);
  let app;
  let view;
  let eventNames = [];
  /** the custom event and property whose values are shown */
  let property = null;

  function funnelForm(query) {
    const option = (value, label, current) =>
      '<option value="' + value + '"' + (value === current ? ' selected' : '') + '>' + label + '</option>';
    return (
      '<form id="funnel-form" class="row">' +
      '<input name="steps" aria-label="Steps" style="flex:3 1 260px" value="' +
      esc(query.steps) +
      '" placeholder="event names, separated by commas">' +
      '<select id="add-step" aria-label="Add a step" style="width:auto;flex:1 1 160px"><option value="">Add a step…</option></select>' +
      '<select name="by" aria-label="Count by" style="width:auto">' +
      option('user', 'by user', query.by) +
      option('session', 'by session', query.by) +
      '</select><select name="window" aria-label="Window" style="width:auto">' +
      option('1h', 'within 1 hour', query.window) +
      option('1d', 'within 1 day', query.window) +
      option('7d', 'within 7 days', query.window) +
      '</select><button type="submit">Show</button></form>' +
      '<div id="funnel-steps"><p class="muted">Loading…</p></div>' +
      '<p class="muted">Up to 6 steps: any event name, or the name of a custom event. Each step counts those who took it after the one before, within the window from the first.</p>'
    );
  }

  function funnelQuery() {
    const query = new URLSearchParams(location.search);
    return {
      steps: query.get('steps') || DEFAULT_FUNNEL.steps,
      by: query.get('by') || DEFAULT_FUNNEL.by,
      window: query.get('window') || DEFAULT_FUNNEL.window,
    };
  }

  /** the app's funnels as listed: the default one first */
  let savedFunnels = [];
  const funnelsPath = () => '/api/apps/' + encodeURIComponent(app) + '/funnels';

  /** fills the saved funnels' list; `select`: the id to select (null: the default), undefined: the one shown */
  async function loadSaved(select) {
    savedFunnels = await api('GET', funnelsPath());
    showSaved(select);
  }

  /** selects the saved funnel with id `select` (null: the default) and shows it, or (undefined) the one shown */
  function showSaved(select) {
    const shown = funnelQuery();
    const index = savedFunnels.findIndex((funnel) =>
      select === undefined
        ? funnel.steps.join(',') === shown.steps && funnel.by === shown.by && funnel.window === shown.window
        : funnel.id === select,
    );
    const list = document.getElementById('saved-funnels');
    list.innerHTML =
      (index === -1 ? '<option value="">Unsaved steps</option>' : '') +
      savedFunnels
        .map(
          (funnel, i) =>
            '<option value="' + i + '"' + (i === index ? ' selected' : '') + '>' + esc(funnel.name) + '</option>',
        )
        .join('');
    document.getElementById('delete-funnel').disabled = index === -1 || savedFunnels[index].id === null;
    if (select !== undefined) list.dispatchEvent(new Event('change'));
  }

  /** numbers each funnel request, so an answer that arrives after a newer request's is dropped */
  let funnelRequests = 0;

  async function loadFunnel() {
    const request = ++funnelRequests;
    const out = document.getElementById('funnel-steps');
    const query = funnelQuery();
    const params = new URLSearchParams(view);
    for (const [key, value] of Object.entries(query)) params.set(key, value);
    try {
      const answer = await api('GET', '/api/apps/' + encodeURIComponent(app) + '/funnel?' + params);
      if (request === funnelRequests) out.innerHTML = funnelTable(answer.steps);
    } catch (error) {
      if (request === funnelRequests) out.innerHTML = '<p class="error">' + esc(error.message) + '</p>';
    }
  }

  async function loadValues() {
    const out = document.getElementById('property-values');
    if (!out || !property || !property.property) return;
    const path =
      '/api/apps/' +
      encodeURIComponent(app) +
      '/custom-events/' +
      encodeURIComponent(property.name) +
      '/properties/' +
      encodeURIComponent(property.property);
    try {
      const { values } = await api('GET', path + '?' + view);
      const total = values.reduce((sum, entry) => sum + entry.count, 0);
      out.innerHTML =
        values.length === 0
          ? '<p class="muted">No values of "' + esc(property.property) + '" for ' + esc(property.name) + '.</p>'
          : '<table><tr><th>' +
            esc(property.property) +
            '</th><th class="num">Events</th><th class="num">Share</th></tr>' +
            values
              .map(
                (entry) =>
                  '<tr><td>' +
                  esc(entry.value) +
                  '</td><td class="num">' +
                  num(entry.count) +
                  '</td><td class="num">' +
                  pct(ratio(entry.count, total)) +
                  '</td></tr>',
              )
              .join('') +
            '</table>';
    } catch (error) {
      out.innerHTML = '<p class="error">' + esc(error.message) + '</p>';
    }
  }

  /** the cards' frame, built once: the forms in it keep what the user typed while the numbers reload */
  function frame() {
    target.innerHTML =
      '<div class="card" id="retention" data-section="Retention"><h2>Retention <span class="muted">(new users by first day, back on day N)</span></h2>' +
      '<p id="retention-summary" class="muted"></p><div id="cohort-grid"></div></div>' +
      '<div class="card" id="funnel" data-section="Funnels"><h2>Funnel</h2>' +
      '<div class="row" style="margin-bottom:10px"><select id="saved-funnels" aria-label="Saved funnels" style="width:auto;flex:1 1 200px"></select>' +
      '<button type="button" class="secondary" id="delete-funnel" disabled>Delete</button></div>' +
      funnelForm(funnelQuery()) +
      '<form id="save-funnel" class="row"><input name="name" aria-label="Funnel name" placeholder="Save these steps as…" style="flex:1 1 200px">' +
      '<button type="submit" class="secondary">Save funnel</button></form><p class="error" id="funnel-error" role="alert"></p>' +
      '</div>' +
      '<div class="grid">' +
      '<div class="card" id="custom" data-section="Custom events"><h2>Custom events</h2><div id="custom-events"></div>' +
      '<form id="property-form" class="row" style="margin-top:12px">' +
      '<input name="name" aria-label="Custom event" placeholder="custom event" style="flex:1 1 140px">' +
      '<input name="property" aria-label="Property" placeholder="property of custom_data" style="flex:1 1 140px">' +
      '<button type="submit">Top values</button></form><div id="property-values"></div></div>' +
      '<div class="card" id="campaigns-section" data-section="Campaigns"><h2>Campaigns <span class="muted">(start_param of new users)</span></h2>' +
      '<div id="campaigns"></div></div></div>' +
      '<div class="card" id="revenue-section" data-section="Revenue"><h2>Revenue <span class="muted">(Telegram Stars)</span></h2><div id="revenue"></div></div>';

    document.getElementById('funnel-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const form = event.target.elements;
      const query = new URLSearchParams(location.search);
      query.set('steps', form.steps.value.trim());
      query.set('by', form.by.value);
      query.set('window', form.window.value);
      history.replaceState(null, '', location.pathname + '?' + query);
      showSaved(undefined);
      loadFunnel();
    });
    document.getElementById('add-step').addEventListener('change', (event) => {
      const name = event.target.value;
      if (!name) return;
      const steps = document.getElementById('funnel-form').elements.steps;
      steps.value = steps.value.trim() ? steps.value.trim().replace(/,\s*$/, '') + ',' + name : name;
      event.target.value = '';
    });
    const saved = document.getElementById('saved-funnels');
    saved.addEventListener('change', () => {
      const funnel = savedFunnels[Number(saved.value)];
      document.getElementById('delete-funnel').disabled = !funnel || funnel.id === null;
      if (!funnel) return;
      const form = document.getElementById('funnel-form');
      form.elements.steps.value = funnel.steps.join(',');
      form.elements.by.value = funnel.by;
      form.elements.window.value = funnel.window;
      form.requestSubmit();
    });
    document.getElementById('save-funnel').addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = document.getElementById('funnel-form').elements;
      const error = document.getElementById('funnel-error');
      error.textContent = '';
      try {
        const funnel = await api('POST', funnelsPath(), {
          name: event.target.elements.name.value,
          steps: form.steps.value.split(',').map((step) => step.trim()),
          by: form.by.value,
          window: form.window.value,
        });
        event.target.elements.name.value = '';
        await loadSaved(funnel.id);
      } catch (failure) {
        error.textContent = failure.message;
      }
    });
    document.getElementById('delete-funnel').addEventListener('click', async () => {
      const funnel = savedFunnels[Number(saved.value)];
      if (!funnel || funnel.id === null || !confirm('Delete the funnel "' + funnel.name + '"?')) return;
      await api('DELETE', funnelsPath() + '/' + funnel.id);
      await loadSaved(null);
    });
    loadSaved(undefined);
    const propertyForm = document.getElementById('property-form');
    propertyForm.addEventListener('submit', (event) => {
      event.preventDefault();
      property = {
        name: propertyForm.elements.name.value.trim(),
        property: propertyForm.elements.property.value.trim(),
      };
      loadValues();
    });
    document.getElementById('custom-events').addEventListener('click', (event) => {
      const chosen = event.target.closest('.custom-property');
      if (chosen) {
        propertyForm.elements.name.value = chosen.dataset.name;
        propertyForm.elements.property.value = chosen.dataset.property;
        propertyForm.requestSubmit();
        return;
      }
      const button = event.target.closest('.custom-name');
      if (!button) return;
      propertyForm.elements.name.value = button.dataset.name;
      propertyForm.elements.property.focus();
    });
  }

  let revenueChart = null;

  /** Stars per day over every day of the period (a day without payments is 0), today drawn apart */
  function drawRevenue(period, days) {
    revenueChart?.destroy();
    revenueChart = null;
    const element = document.getElementById('chart-revenue');
    if (!element) return;
    const stars = new Map(days.map((day) => [day.day, day.stars]));
    const today = new Date().toISOString().slice(0, 10);
    const all = [];
    for (let time = Date.parse(period.from); time <= Date.parse(period.to); time += 86400000) {
      const day = new Date(time).toISOString().slice(0, 10);
      all.push({ day, complete: day < today, stars: stars.get(day) ?? 0 });
    }
    revenueChart = window.siteCharts.daily(element, 'Stars per day (net)', all, [
      { label: 'Stars', values: all.map((day) => day.stars) },
    ]);
  }

  /** the names a funnel step can take, as seen in the period: events by name, then custom events by their name */
  function offerSteps(names) {
    const select = document.getElementById('add-step');
    select.innerHTML =
      '<option value="">Add a step…</option>' +
      names.map((name) => '<option value="' + esc(name) + '">' + esc(name) + '</option>').join('');
  }

  function render(data) {
    if (!document.getElementById('funnel-form')) frame();
    const customNames = data.custom_events.map((event) => event.name).filter((name) => !name.startsWith('('));
    offerSteps([...new Set(eventNames.filter((name) => name !== 'custom-event').concat(customNames))]);
    const cohorts = data.retention.cohorts;
    // new users, D1 and D7 are on the overview; D30 needs a longer view
    document.getElementById('retention-summary').textContent =
      num(data.summary.new_users) +
      ' new users in this period; D30 retention ' +
      (retention(cohorts, 30) === null ? 'not reached yet in this period' : pct(retention(cohorts, 30))) +
      '.';
    document.getElementById('cohort-grid').innerHTML = cohortGrid(cohorts);
    document.getElementById('custom-events').innerHTML = customEvents(data.custom_events);
    document.getElementById('campaigns').innerHTML = campaigns(data.campaigns);
    document.getElementById('revenue').innerHTML = revenue(data.revenue);
    drawRevenue(data.period, data.revenue.days);
    const name = document.getElementById('property-form').elements.name;
    if (!name.value && data.custom_events[0]) name.value = data.custom_events[0].name;
    loadFunnel();
    loadValues();
  }

  window.siteInsights = {
    /** the view changed: a funnel or a property's values asked for from now on read it, before its cards reload */
    viewChanged(appName, viewQuery) {
      app = appName;
      view = viewQuery;
    },
    /** `names`: the event names the dashboard saw in the period, offered as funnel steps */
    async load(appName, viewQuery, names = []) {
      app = appName;
      view = viewQuery;
      eventNames = names;
      try {
        render(await api('GET', '/api/apps/' + encodeURIComponent(app) + '/insights?' + view));
      } catch (error) {
        target.innerHTML = '<div class="card"><p class="error">' + esc(error.message) + '</p></div>';
      }
    },
  };
})();
