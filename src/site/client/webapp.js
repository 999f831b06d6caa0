// Mini App mode: posts the initData Telegram gave this page (its WebApp object, or the launch URL's hash)
// to /auth/webapp, then opens the Analytics section, or the one app's dashboard the link names (?app=…).
(() => {
  const params = new URLSearchParams(location.hash.slice(1));
  const initData = (window.Telegram && Telegram.WebApp && Telegram.WebApp.initData) || params.get('tgWebAppData') || '';
  // only an app's name goes into the path: a link can open a dashboard of this site and nothing else
  const app = new URLSearchParams(location.search).get('app');
  const next = app && /^[a-z0-9_-]{1,64}$/.test(app) ? '/analytics/' + app : '/analytics';
  const failed = () => {
    document.getElementById('status').textContent = 'Sign-in failed: open this page from the bot.';
  };
  fetch('/auth/webapp', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ initData }),
    credentials: 'same-origin',
  }).then((response) => (response.ok ? location.replace(next) : failed()), failed);
})();
