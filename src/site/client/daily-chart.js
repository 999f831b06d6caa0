// A daily line chart (uPlot) in the page's colours: complete days solid; a day still under way (today, UTC) drawn
// apart, dashed from the day before, so a partial day never reads as a drop.
(() => {
  const COLORS = ['#2481cc', '#e8590c', '#2f9e44', '#9c36b5', '#c2255c', '#1098ad', '#f08c00', '#5c7cfa'];

  /**
   * days: [{ day, complete }], series: [{ label, values }] (a value may be null: no point). `format` writes a value on
   * the axis and in the legend.
   */
  function daily(element, title, days, series, format) {
    const width = Math.max(280, element.clientWidth - 4);
    const xs = days.map((d) => Date.parse(d.day) / 1000);
    const style = getComputedStyle(document.body);
    const text = style.color;
    const line = style.getPropertyValue('--line').trim() || '#e4e7ec';
    const accent = style.getPropertyValue('--accent').trim();
    const colors = accent ? [accent].concat(COLORS.slice(1)) : COLORS;
    const axis = { stroke: text, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
    // one tick per day at most (the data is daily): "Nov 27", never hours
    const dayAxis = {
      ...axis,
      incrs: [1, 2, 7, 14, 30, 61].map((days) => days * 86400),
      values: (_, ticks) =>
        ticks.map((tick) =>
          new Date(tick * 1000).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' }),
        ),
    };
    const values = format ? { ...axis, values: (_, ticks) => ticks.map(format), size: 60 } : axis;
    const open = days.length > 1 && days[days.length - 1].complete === false;
    const solid = series.map((s) => (open ? s.values.slice(0, -1).concat([null]) : s.values));
    const partial = open
      ? series.map((s) => s.values.map((value, index) => (index >= s.values.length - 2 ? value : null)))
      : [];
    const seriesOptions = (s, i, dashed) => ({
      label: s.label + (dashed ? ' (today, so far)' : ''),
      stroke: colors[i % colors.length],
      width: 2,
      dash: dashed ? [5, 5] : undefined,
      spanGaps: false,
      points: { show: days.length < 40 },
      value: format ? (_, value) => (value === null || value === undefined ? '—' : format(value)) : undefined,
    });
    return new uPlot(
      {
        title,
        width,
        height: 240,
        legend: { live: false },
        scales: { x: { time: true } },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        axes: [dayAxis, values],
        series: [{}]
          .concat(series.map((s, i) => seriesOptions(s, i, false)))
          .concat(partial.map((_, i) => seriesOptions(series[i], i, true))),
      },
      [xs].concat(solid, partial),
      element,
    );
  }

  window.siteCharts = { daily };
})();
