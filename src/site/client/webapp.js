// Mini App mode: posts the initData Telegram gave this page (its WebApp object, or the launch URL's hash)
// to /auth/webapp, then opens the Analytics section.
(() => {
  const params = new URLSearchParams(location.hash.slice(1));
  const initData = (window.Telegram && Telegram.WebApp && Telegram.WebApp.initData) || params.get('tgWebAppData') || '';
  const failed = () => {
    document.getElementById('status').textContent = 'Sign-in failed: open this page from the bot.';
  };
  fetch('/auth/webapp', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ initData }),
    credentials: 'same-origin',
  }).then((response) => (response.ok ? location.replace('/analytics') : failed()), failed);
})();
