// Inside Telegram (a session begun in the Mini App): the page takes Telegram's theme as its colours and follows it
// when it changes, tells Telegram it is ready and may fill the screen, and Telegram's BackButton goes back a level.
(() => {
  const webApp = window.Telegram?.WebApp;
  if (!webApp) return;
  /** the page's colours, each from the first of Telegram's theme parameters that is given */
  const COLOURS = {
    '--bg': ['secondary_bg_color', 'bg_color'],
    '--card': ['section_bg_color', 'bg_color'],
    '--text': ['text_color'],
    '--muted': ['hint_color', 'subtitle_text_color'],
    '--line': ['section_separator_color', 'hint_color'],
    '--accent': ['button_color', 'link_color'],
    '--accent-text': ['button_text_color'],
    '--link': ['link_color', 'accent_text_color'],
    '--bad': ['destructive_text_color'],
  };

  function applyTheme() {
    const root = document.documentElement;
    root.dataset.scheme = webApp.colorScheme === 'dark' ? 'dark' : 'light';
    const theme = webApp.themeParams || {};
    for (const [variable, names] of Object.entries(COLOURS)) {
      const name = names.find((candidate) => theme[candidate]);
      if (name) root.style.setProperty(variable, theme[name]);
      else root.style.removeProperty(variable);
    }
  }

  applyTheme();
  webApp.onEvent('themeChanged', applyTheme);
  webApp.ready();
  webApp.expand();
  // the page names where "back" goes (the app list from a dashboard); the app list itself has no back
  const back = document.body.dataset.back;
  if (back) {
    webApp.BackButton.onClick(() => location.assign(back));
    webApp.BackButton.show();
  } else webApp.BackButton.hide();
})();
