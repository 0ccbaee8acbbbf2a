import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { PNG } from 'pngjs';
import { page } from './fixture-server.ts';

/**
 * Pages for removeAds: real consent libraries from npm (klaro, vanilla-cookieconsent, Osano's
 * cookieconsent, cookie-notice, cookies-eu-banner, orejime, tarteaucitron, cookie-consent-js and
 * Porsche's cookie-consent-banner web component), ads that EasyList matches, and a homemade modal. They share one layout, so that
 * tests can look at the same regions of every capture:
 *
 * - a sticky navigation bar across the top (NAV), which must survive;
 * - the main content, a green block on the left (CONTENT), whose pixels must never change;
 * - an ad column on the right (AD_COLUMN), empty page background once ads are gone;
 * - the bottom-right corner (BANNER_CORNER), where most consent libraries here put their banner
 *   (the test names the region of each).
 *
 * Everything else is the page background (BACKGROUND). Serve ad pages from 127.0.0.2, not
 * 127.0.0.1: EasyList turns generic cosmetic rules off on 127.0.0.1 and localhost (`$generichide`).
 */
export const BACKGROUND: readonly [number, number, number] = [244, 232, 193];
export const NAV_COLOUR: readonly [number, number, number] = [27, 58, 107];
export const CONTENT_COLOUR: readonly [number, number, number] = [46, 139, 87];
/** CONSENT_STATE turns this colour once the library has stored a refusal, and ACCEPTED_COLOUR for a consent. */
export const REFUSED_COLOUR: readonly [number, number, number] = [128, 0, 128];
export const ACCEPTED_COLOUR: readonly [number, number, number] = [255, 140, 0];

export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}
export const NAV: Region = { x: 0, y: 0, width: 1280, height: 60 };
export const CONTENT: Region = { x: 40, y: 100, width: 600, height: 300 };
export const AD_COLUMN: Region = { x: 900, y: 80, width: 340, height: 460 };
export const BANNER_CORNER: Region = { x: 940, y: 620, width: 320, height: 80 };
export const CONSENT_STATE: Region = { x: 40, y: 440, width: 60, height: 40 };

const VENDOR_FILES: Record<string, { file: string; type: string }> = {
  '/vendor/klaro.js': { file: 'klaro/dist/klaro.js', type: 'text/javascript' },
  '/vendor/vanilla-cookieconsent.js': { file: 'vanilla-cookieconsent/dist/cookieconsent.umd.js', type: 'text/javascript' },
  '/vendor/vanilla-cookieconsent.css': { file: 'vanilla-cookieconsent/dist/cookieconsent.css', type: 'text/css' },
  '/vendor/osano-cookieconsent.js': { file: 'cookieconsent/build/cookieconsent.min.js', type: 'text/javascript' },
  '/vendor/osano-cookieconsent.css': { file: 'cookieconsent/build/cookieconsent.min.css', type: 'text/css' },
  '/vendor/cookie-notice.js': { file: 'cookie-notice/dist/cookie.notice.min.js', type: 'text/javascript' },
  '/vendor/cookies-eu-banner.js': { file: 'cookies-eu-banner/dist/cookies-eu-banner.global.js', type: 'text/javascript' },
  '/vendor/orejime.js': { file: 'orejime/dist/orejime-standard-en.js', type: 'text/javascript' },
  '/vendor/orejime.css': { file: 'orejime/dist/orejime-standard.css', type: 'text/css' },
};
/** Libraries that load their own files (languages, style sheets, modules) from beside their script. */
const VENDOR_DIRS: Record<string, string> = {
  '/vendor/tarteaucitron/': 'tarteaucitronjs/',
  '/vendor/cookie-consent-js/': 'cookie-consent-js/',
  '/vendor/porsche-cookie-consent-banner/': '@porscheofficial/cookie-consent-banner/dist/cookie-consent-banner/',
};
const CONTENT_TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };
const NODE_MODULES = path.resolve(import.meta.dirname, '../../node_modules');

const LAYOUT_STYLE = `body{background:rgb(${BACKGROUND});font:16px/1.4 sans-serif;height:1400px}
  #site-nav{position:sticky;top:0;z-index:1000;height:${NAV.height}px;background:rgb(${NAV_COLOUR})}
  main{position:absolute;left:${CONTENT.x}px;top:${CONTENT.y}px;width:${CONTENT.width}px;height:${CONTENT.height}px;background:rgb(${CONTENT_COLOUR})}
  aside{position:absolute;left:${AD_COLUMN.x}px;top:${AD_COLUMN.y}px;width:${AD_COLUMN.width}px}
  #consent-state{position:absolute;left:${CONSENT_STATE.x}px;top:${CONSENT_STATE.y}px;width:${CONSENT_STATE.width}px;height:${CONSENT_STATE.height}px}`;

/**
 * Paints CONSENT_STATE from the consent cookie the library writes, so that a capture shows whether
 * the banner was answered, and how: `decide(cookies)` returns 'refused', 'accepted' or undefined.
 */
function consentStateProbe(decide: string): string {
  return `<script>addEventListener('DOMContentLoaded', () => {
    const box = document.getElementById('consent-state');
    const colours = { refused: 'rgb(${REFUSED_COLOUR})', accepted: 'rgb(${ACCEPTED_COLOUR})' };
    let shown;
    const check = () => {
      const state = (${decide})(document.cookie);
      if (state && state !== shown) box.style.background = colours[(shown = state)];
    };
    setInterval(check, 50);
    // Right after an answer too: the capture may come within the interval.
    document.addEventListener('click', () => setTimeout(check, 0), true);
  });</script>`;
}

function layout(extra: { head?: string; aside?: string; after?: string } = {}): string {
  return page(`<nav id="site-nav"></nav><main></main><div id="consent-state"></div><aside>${extra.aside ?? ''}</aside>${extra.after ?? ''}`, {
    style: LAYOUT_STYLE,
    head: extra.head ?? '',
  });
}

const PAGES: Record<string, () => string> = {
  // klaro 0.7: its notice sits bottom-right; the script reads window.klaroConfig when it loads.
  '/consent/klaro': () =>
    layout({
      head: `<script>window.klaroConfig = { version: 1, elementID: 'klaro', storageMethod: 'cookie', acceptAll: true,
        hideDeclineAll: false, mustConsent: false, noticeAsModal: false,
        services: [{ name: 'analytics', title: 'Analytics', purposes: ['analytics'] }] };</script>
        <script defer src="/vendor/klaro.js"></script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )klaro=([^;]*)/.exec(c); if (m) return JSON.parse(decodeURIComponent(m[1])).analytics ? 'accepted' : 'refused'; }`,
        )}`,
    }),

  // vanilla-cookieconsent 3: a "box" consent modal, bottom right, with a "Reject all" button.
  // hideFromBots is off, or the library would stay silent for a browser that says it is automated.
  '/consent/vanilla-cookieconsent': () =>
    layout({
      head: `<link rel="stylesheet" href="/vendor/vanilla-cookieconsent.css"><script defer src="/vendor/vanilla-cookieconsent.js"></script>
        <script>addEventListener('DOMContentLoaded', () => CookieConsent.run({
          hideFromBots: false,
          guiOptions: { consentModal: { layout: 'box', position: 'bottom right' } },
          categories: { necessary: { enabled: true, readOnly: true }, analytics: {} },
          language: { default: 'en', translations: { en: {
            consentModal: { title: 'We use cookies', description: 'Cookies help us deliver this site.',
              acceptAllBtn: 'Accept all', acceptNecessaryBtn: 'Reject all', showPreferencesBtn: 'Manage preferences' },
            preferencesModal: { title: 'Cookie preferences', acceptAllBtn: 'Accept all', acceptNecessaryBtn: 'Reject all',
              savePreferencesBtn: 'Save preferences', sections: [] } } } } }));</script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )cc_cookie=([^;]*)/.exec(c);
            if (m) return JSON.parse(decodeURIComponent(m[1])).categories.includes('analytics') ? 'accepted' : 'refused'; }`,
        )}`,
    }),

  // Osano's cookieconsent 3: a floating black banner, bottom right, of the opt-out kind ("Decline").
  '/consent/osano-cookieconsent': () =>
    layout({
      head: `<link rel="stylesheet" href="/vendor/osano-cookieconsent.css"><script src="/vendor/osano-cookieconsent.js"></script>
        <script>addEventListener('load', () => window.cookieconsent.initialise({
          type: 'opt-out', position: 'bottom-right',
          palette: { popup: { background: '#000000', text: '#ffffff' }, button: { background: '#f1d600', text: '#000000' } },
          content: { message: 'This website uses cookies to ensure you get the best experience on our website.' } }));</script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )cookieconsent_status=([^;]*)/.exec(c); if (m) return m[1] === 'deny' ? 'refused' : 'accepted'; }`,
        )}`,
    }),

  // cookie-notice 1.3: a bar fixed across the bottom, "we assume you accept", and one "Ok", which only acknowledges.
  '/consent/cookie-notice': () =>
    layout({
      head: `<script src="/vendor/cookie-notice.js"></script>
        <script>addEventListener('DOMContentLoaded', () => new cookieNoticeJS({ buttonBgColor: '#000000', noticeBgColor: '#222222' }));</script>${consentStateProbe(
          `(c) => { if (/(?:^|; )cookie_notice=1/.test(c)) return 'refused'; }`,
        )}`,
    }),

  // cookies-eu-banner 3: the banner is inserted at the very top of <body>, in the flow: it pushes the page down.
  '/consent/cookies-eu-banner': () =>
    layout({
      head: `<style>#cookies-eu-banner{background:#222;color:#fff;padding:8px;height:36px;box-sizing:border-box;overflow:hidden}</style>
        <script src="/vendor/cookies-eu-banner.js"></script>
        <script>addEventListener('DOMContentLoaded', () => CookiesEuBanner.createCookiesBanner({ onAccept() {}, onReject() {} }));</script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )hasConsent=([^;]*)/.exec(c); if (m) return m[1] === 'false' ? 'refused' : 'accepted'; }`,
        )}`,
      after: `<template id="cookies-eu-banner-template"><div id="cookies-eu-banner">By continuing to visit this site, you accept
        the use of cookies by Google Analytics for statistical purposes.
        <button id="cookies-eu-reject">Reject</button><button id="cookies-eu-accept">Accept</button></div></template>`,
    }),

  // orejime 3: a banner in the bottom-left corner with "Accept", "Decline" and "Customize".
  '/consent/orejime': () =>
    layout({
      head: `<link rel="stylesheet" href="/vendor/orejime.css">
        <script>window.orejimeConfig = { privacyPolicyUrl: '/privacy',
          purposes: [{ id: 'analytics', title: 'Analytics', cookies: ['_ga'] }] };</script>
        <script defer src="/vendor/orejime.js"></script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )eu-consent=([^;]*)/.exec(c); if (m) return JSON.parse(decodeURIComponent(m[1])).analytics ? 'accepted' : 'refused'; }`,
        )}`,
    }),

  // tarteaucitron 1.34: a bar across the bottom ("Allow all", "Deny all", "Personalize") for one service.
  '/consent/tarteaucitron': () =>
    layout({
      head: `<script src="/vendor/tarteaucitron/tarteaucitron.min.js"></script>
        <script>tarteaucitron.init({ privacyUrl: '', orientation: 'bottom', showAlertSmall: false, cookieslist: false,
          showIcon: false, DenyAllCta: true, AcceptAllCta: true, highPrivacy: true, handleBrowserDNTRequest: false,
          removeCredit: true, moreInfoLink: false, useExternalCss: false, mandatory: false, bodyPosition: 'bottom' });
          (tarteaucitron.job = tarteaucitron.job || []).push('gtag');</script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )tarteaucitron=([^;]*)/.exec(c); if (m && /gtag=false/.test(m[1])) return 'refused'; if (m && /gtag=true/.test(m[1])) return 'accepted'; }`,
        )}`,
    }),

  // cookie-consent-js 2: a dialog over the page, "Accept all cookies" or "Only accept technically necessary cookies".
  '/consent/cookie-consent-js': () =>
    layout({
      head: `<link rel="stylesheet" href="/vendor/cookie-consent-js/src/cookie-consent.css">
        <script src="/vendor/cookie-consent-js/src/cookie-consent.js"></script>
        <script>addEventListener('DOMContentLoaded', () => new CookieConsent({
          contentUrl: '/vendor/cookie-consent-js/cookie-consent-content', privacyPolicyUrl: '/privacy' }));</script>${consentStateProbe(
          `(c) => { const m = /(?:^|; )cookie-consent-tracking-allowed=([^;]*)/.exec(c); if (m) return m[1] === 'false' ? 'refused' : 'accepted'; }`,
        )}`,
    }),

  // Porsche's cookie-consent-banner 4: a web component, its bar and buttons inside a shadow root.
  '/consent/porsche-cookie-consent-banner': () =>
    layout({
      head: `<script type="module" src="/vendor/porsche-cookie-consent-banner/cookie-consent-banner.esm.js"></script>${consentStateProbe(
        `(c) => { const m = /(?:^|; )cookies_accepted_categories=([^;]*)/.exec(c); if (m) return /analytics/.test(decodeURIComponent(m[1])) ? 'accepted' : 'refused'; }`,
      )}`,
      after: `<cookie-consent-banner btn-label-accept-and-continue="Agree and continue"
          btn-label-only-essential-and-continue="Continue with technically required cookies only"
          btn-label-persist-selection-and-continue="Save selection and continue"
          btn-label-select-all-and-continue="Select all and continue"
          content-settings-description="You can decide which cookies are used by selecting the respective options below.">
          We use cookies and similar technologies to provide certain features and enhance the user experience.
          By clicking on "Agree and continue", you declare your consent to the use of the aforementioned cookies.</cookie-consent-banner>
        <script>document.querySelector('cookie-consent-banner').availableCategories = [
          { key: 'technically_required', label: 'Technically necessary cookies', description: 'Needed to use the site.', isMandatory: true },
          { key: 'analytics', label: 'Analysis cookies', description: 'How visitors use the site.' }];</script>`,
    }),

  // No library, no controls: a box only EasyList's cookie list names (###cookie-banner). Serve it from 127.0.0.2.
  '/consent/list-only': () =>
    layout({
      after: `<div id="cookie-banner" style="position:fixed;right:20px;bottom:20px;width:340px;height:100px;background:#222;color:#fff;z-index:5">
        This site stores small files on your device. <a href="/privacy">Learn more</a></div>`,
    }),

  // A homemade notice whose buttons submit a form to another page: clicking would leave the page, so it is hidden.
  '/consent/form-notice': () =>
    layout({
      after: `<form action="/elsewhere" method="post" style="position:fixed;left:0;right:0;bottom:0;height:80px;margin:0;background:#222;color:#fff;z-index:5">
        We use cookies to measure our audience. <button name="choice" value="no">Reject</button><button name="choice" value="yes">Accept</button></form>`,
    }),

  // Ads three ways: markup EasyList hides by class and id, an image and a script from paths it blocks.
  // Each paints red (ad-red) if it survives. The script colours a neutral slot, so only network blocking stops it.
  '/ads': () =>
    layout({
      head: '<style>.ad-red{background:#e00000} #slot-b{height:120px;margin-top:10px}</style>',
      aside: `<div class="ad-slot ad-red" style="height:100px"></div>
        <div id="ad_leaderboard" class="ad-red" style="height:80px;margin-top:10px"></div>
        <img src="/ads/banners/leader.png" alt="" style="display:block;margin-top:10px">
        <div id="slot-b"></div><script src="/ads/custom_ads.js"></script>`,
    }),

  // No library: a full-screen backdrop, a centred newsletter modal over it, and a scroll lock.
  '/overlay/newsletter': () =>
    layout({
      head: '<style>html,body{overflow:hidden}</style>',
      after: `<div class="backdrop" style="position:fixed;inset:0;background:rgba(0,0,0,0.6);z-index:9000"></div>
        <div class="newsletter" style="position:fixed;left:340px;top:160px;width:600px;height:400px;background:#fff;z-index:9001">
          <h2>Subscribe to our newsletter</h2><input type="email" placeholder="you@example.com"><button>Subscribe</button></div>`,
    }),

  // An app shell: the whole page lives in a fixed, full-viewport scroller holding <main>. It must stay.
  '/overlay/app-shell': () =>
    page(`<div id="app" style="position:fixed;inset:0;overflow:auto;z-index:20;background:rgb(${BACKGROUND})">
      <nav id="site-nav"></nav><main></main></div>`, { style: LAYOUT_STYLE }),
};

const AD_IMAGE = (() => {
  const png = new PNG({ width: AD_COLUMN.width, height: 120 });
  for (let offset = 0; offset < png.data.length; offset += 4) png.data.set([224, 0, 0, 255], offset);
  return PNG.sync.write(png);
})();

/** Serves the pages above, the libraries' files from node_modules, and the ad resources. False if the path is not one of them. */
export function serveRemoveAdsFixture(url: URL, res: http.ServerResponse): boolean {
  const send = (type: string, body: string | Buffer) => {
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const pageHtml = PAGES[url.pathname];
  if (pageHtml) {
    send('text/html; charset=utf-8', pageHtml());
    return true;
  }
  const vendor = VENDOR_FILES[url.pathname];
  if (vendor) {
    send(vendor.type, readFileSync(path.join(NODE_MODULES, vendor.file)));
    return true;
  }
  const dir = Object.keys(VENDOR_DIRS).find((prefix) => url.pathname.startsWith(prefix));
  if (dir) {
    const relative = path.posix.normalize(url.pathname.slice(dir.length));
    const type = CONTENT_TYPES[path.extname(relative)];
    if (relative.startsWith('..') || !type) return false;
    try {
      send(type, readFileSync(path.join(NODE_MODULES, VENDOR_DIRS[dir] as string, relative)));
      return true;
    } catch {
      return false;
    }
  }
  if (url.pathname === '/ads/banners/leader.png') {
    send('image/png', AD_IMAGE);
    return true;
  }
  if (url.pathname === '/ads/custom_ads.js') {
    send('text/javascript', `document.getElementById('slot-b').className = 'ad-red';`);
    return true;
  }
  return false;
}
