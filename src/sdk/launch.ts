// Reads who and where from Telegram's launch data, without touching Telegram's objects: window.Telegram.WebApp
// when present, else the tgWebApp* launch parameters of the URL, kept in sessionStorage for later reloads.

export interface Launch {
  userId: number;
  isPremium: boolean;
  locale?: string;
  platform?: string;
  startParam: string;
  /** Telegram's signed launch data as it came (initData): sent once per launch, so the service can check it */
  initData?: string;
}

interface TelegramUser {
  id?: unknown;
  is_premium?: unknown;
  language_code?: unknown;
}

const PARAMS_KEY = 'tma-analytics/launch';

function launchParams(): URLSearchParams {
  const fromUrl = new URLSearchParams(location.hash.slice(1) + '&' + location.search.slice(1));
  if (fromUrl.has('tgWebAppData')) {
    try {
      sessionStorage.setItem(PARAMS_KEY, fromUrl.toString());
    } catch {
      // storage may be unavailable: the URL still serves this page view
    }
    return fromUrl;
  }
  try {
    return new URLSearchParams(sessionStorage.getItem(PARAMS_KEY) ?? '');
  } catch {
    return fromUrl;
  }
}

function asLaunch(
  user: TelegramUser | undefined,
  platform: unknown,
  startParam: unknown,
  initData: unknown,
): Launch | undefined {
  if (!user || typeof user.id !== 'number') return undefined;
  return {
    userId: user.id,
    isPremium: user.is_premium === true,
    locale: typeof user.language_code === 'string' ? user.language_code : undefined,
    platform: typeof platform === 'string' ? platform : undefined,
    startParam: typeof startParam === 'string' ? startParam : '',
    initData: typeof initData === 'string' && initData !== '' ? initData : undefined,
  };
}

/** undefined outside Telegram (no user): the SDK then stays idle */
export function readLaunch(): Launch | undefined {
  const webApp = (
    window as {
      Telegram?: {
        WebApp?: {
          initData?: unknown;
          initDataUnsafe?: { user?: TelegramUser; start_param?: unknown };
          platform?: unknown;
        };
      };
    }
  ).Telegram?.WebApp;
  const fromWebApp = asLaunch(
    webApp?.initDataUnsafe?.user,
    webApp?.platform,
    webApp?.initDataUnsafe?.start_param,
    webApp?.initData,
  );
  if (fromWebApp) return fromWebApp;
  const params = launchParams();
  const data = new URLSearchParams(params.get('tgWebAppData') ?? '');
  let user: TelegramUser | undefined;
  try {
    user = JSON.parse(data.get('user') ?? 'null') ?? undefined;
  } catch {
    user = undefined;
  }
  return asLaunch(
    user,
    params.get('tgWebAppPlatform'),
    params.get('tgWebAppStartParam') ?? data.get('start_param'),
    params.get('tgWebAppData'),
  );
}
