import { expect } from 'chai';
import request from 'supertest';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import {
  AD_COLUMN,
  BACKGROUND,
  BANNER_CORNER,
  CONSENT_STATE,
  CONTENT,
  CONTENT_COLOUR,
  NAV,
  NAV_COLOUR,
  REFUSED_COLOUR,
  type Region,
} from '../../support/consent-fixtures.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { appWith, decodeDataUri, sharedRenderer, startRenderer, testConfig, type DecodedImage } from '../../support/harness.ts';
import { differingPixels, shareOfColour } from '../../support/image-regions.ts';

const RED: [number, number, number] = [224, 0, 0];
/** The bottom of the viewport, under a bar fixed at the bottom edge. */
const BOTTOM_BAR: Region = { x: 0, y: 700, width: 1280, height: 20 };
/** Just under the navigation bar: a banner inserted at the top of <body> pushes the bar down over it. */
const BELOW_NAV: Region = { x: 0, y: NAV.height, width: 1280, height: 20 };

/** The four ads of /ads, top to bottom in the ad column: matched by class, by id, by image path, by script path. */
const AD_BY_CLASS: Region = { x: AD_COLUMN.x, y: AD_COLUMN.y, width: AD_COLUMN.width, height: 100 };
const AD_BY_ID: Region = { x: AD_COLUMN.x, y: AD_COLUMN.y + 110, width: AD_COLUMN.width, height: 80 };
const AD_IMAGE: Region = { x: AD_COLUMN.x, y: AD_COLUMN.y + 200, width: AD_COLUMN.width, height: 120 };
const AD_SCRIPT_SLOT: Region = { x: AD_COLUMN.x, y: AD_COLUMN.y + 330, width: AD_COLUMN.width, height: 120 };

interface Pair {
  untouched: DecodedImage;
  cleaned: DecodedImage;
}

async function captureBoth(renderer: Renderer, url: string, wait?: number): Promise<Pair> {
  const shoot = async (removeAds: boolean) => {
    const result = await renderer.capture({ url, quality: 'standard', fullPage: false, removeAds, ...(wait ? { wait } : {}) });
    return decodeDataUri(`data:image/png;base64,${result.image.toString('base64')}`);
  };
  const [untouched, cleaned] = await Promise.all([shoot(false), shoot(true)]);
  return { untouched, cleaned };
}

function itKeepsTheContentAndTheNavBar(pair: () => Pair): void {
  it('leaves the main content pixel for pixel as removeAds:false shows it', () => {
    expect(shareOfColour(pair().untouched, CONTENT, CONTENT_COLOUR), 'content without removeAds').to.equal(1);
    expect(differingPixels(pair().untouched, pair().cleaned, CONTENT)).to.equal(0);
  });

  it('keeps the sticky navigation bar', () => {
    expect(shareOfColour(pair().cleaned, NAV, NAV_COLOUR)).to.equal(1);
  });
}

describe('removeAds (real Chromium, real filter lists and consent libraries)', function () {
  this.timeout(90_000);
  let renderer: Renderer;
  // Ads are served from 127.0.0.2: EasyList turns generic cosmetic filters off on 127.0.0.1.
  let adServer: FixtureServer;
  let server: FixtureServer;

  before(async () => {
    [renderer, adServer, server] = await Promise.all([sharedRenderer(), startFixtureServer('127.0.0.2'), startFixtureServer()]);
  });
  after(() => Promise.all([adServer.close(), server.close()]));

  describe('a page with ads EasyList matches', () => {
    let pair: Pair;
    before(async () => {
      pair = await captureBoth(renderer, adServer.url('/ads'));
    });

    it('with removeAds:false, shows all four ads', () => {
      for (const ad of [AD_BY_CLASS, AD_BY_ID, AD_IMAGE, AD_SCRIPT_SLOT]) {
        expect(shareOfColour(pair.untouched, ad, RED), JSON.stringify(ad)).to.equal(1);
      }
    });

    it('hides an element whose class a generic EasyList rule names (##.ad-slot)', () => {
      expect(shareOfColour(pair.cleaned, AD_BY_CLASS, BACKGROUND)).to.equal(1);
    });

    it('hides an element whose id a generic EasyList rule names (###ad_leaderboard)', () => {
      expect(shareOfColour(pair.cleaned, AD_BY_ID, BACKGROUND)).to.equal(1);
    });

    it('blocks an image from a path EasyList blocks (/ads/banners/*$image)', () => {
      expect(shareOfColour(pair.cleaned, AD_IMAGE, BACKGROUND)).to.equal(1);
    });

    it('blocks a script from a path EasyList blocks (/ads/custom_ads.js$script), so it never paints', () => {
      expect(shareOfColour(pair.cleaned, AD_SCRIPT_SLOT, BACKGROUND)).to.equal(1);
    });

    itKeepsTheContentAndTheNavBar(() => pair);

    it('is what POST /screenshot does when the request does not mention removeAds', async () => {
      const response = await request(appWith(renderer).callback())
        .post('/screenshot')
        .set('Content-Type', 'application/json')
        .send({ url: adServer.url('/ads') });
      expect(response.status, JSON.stringify(response.body).slice(0, 200)).to.equal(200);
      expect(shareOfColour(decodeDataUri(response.body.image), AD_COLUMN, BACKGROUND)).to.equal(1);
    });
  });

  /** Where each library's banner shows; autoconsent has rules for the first three, the heuristic pass answers the others. */
  const libraries = [
    { name: 'klaro', path: '/consent/klaro', banner: BANNER_CORNER, where: 'in the bottom-right corner' },
    { name: 'vanilla-cookieconsent', path: '/consent/vanilla-cookieconsent', banner: BANNER_CORNER, where: 'in the bottom-right corner' },
    { name: "Osano's cookieconsent", path: '/consent/osano-cookieconsent', banner: BANNER_CORNER, where: 'in the bottom-right corner' },
    { name: 'cookie-notice', path: '/consent/cookie-notice', banner: BOTTOM_BAR, where: 'in a bar fixed at the bottom', answer: 'an acknowledgement' },
    { name: 'cookies-eu-banner', path: '/consent/cookies-eu-banner', banner: BELOW_NAV, where: 'at the top of <body>, pushing the page down' },
    { name: 'orejime', path: '/consent/orejime', banner: BANNER_CORNER, where: 'in the bottom-right corner' },
    { name: 'tarteaucitron', path: '/consent/tarteaucitron', banner: BOTTOM_BAR, where: 'in a bar fixed at the bottom' },
    { name: 'cookie-consent-js', path: '/consent/cookie-consent-js', banner: BANNER_CORNER, where: 'in a dialog over the page' },
    { name: "Porsche's cookie-consent-banner", path: '/consent/porsche-cookie-consent-banner', banner: BOTTOM_BAR, where: 'in a shadow root, fixed at the bottom' },
  ];
  for (const library of libraries) {
    describe(`a page with ${library.name}'s consent banner`, () => {
      let pair: Pair;
      before(async () => {
        // A fixed wait, so that removeAds:false sees the banner after its fade-in, whatever the default wait does.
        pair = await captureBoth(renderer, server.url(library.path), 1000);
      });

      it(`with removeAds:false, shows the banner ${library.where}`, () => {
        expect(shareOfColour(pair.untouched, library.banner, BACKGROUND)).to.be.below(0.5);
      });

      it('with removeAds:true, the banner is gone: its place is page background', () => {
        expect(shareOfColour(pair.cleaned, library.banner, BACKGROUND)).to.equal(1);
        expect(shareOfColour(pair.cleaned, BANNER_CORNER, BACKGROUND)).to.equal(1);
      });

      it(`with removeAds:true, it was answered with ${library.answer ?? 'a refusal'}, which the library stored`, () => {
        expect(shareOfColour(pair.cleaned, CONSENT_STATE, REFUSED_COLOUR)).to.equal(1);
      });

      it('with removeAds:false, nobody answered it', () => {
        expect(shareOfColour(pair.untouched, CONSENT_STATE, BACKGROUND)).to.equal(1);
      });

      itKeepsTheContentAndTheNavBar(() => pair);
    });
  }

  describe('a cookie box that only EasyList\'s cookie list names (no library, no answer to give)', () => {
    let pair: Pair;
    before(async () => {
      pair = await captureBoth(renderer, adServer.url('/consent/list-only'));
    });

    it('with removeAds:false, shows the box in the bottom-right corner', () => {
      expect(shareOfColour(pair.untouched, BANNER_CORNER, BACKGROUND)).to.be.below(0.5);
    });

    it('with removeAds:true, the list hides it', () => {
      expect(shareOfColour(pair.cleaned, BANNER_CORNER, BACKGROUND)).to.equal(1);
    });

    itKeepsTheContentAndTheNavBar(() => pair);
  });

  describe('a homemade notice whose buttons submit a form to another page', () => {
    let pair: Pair;
    before(async () => {
      pair = await captureBoth(renderer, server.url('/consent/form-notice'));
    });

    it('with removeAds:false, shows the bar at the bottom', () => {
      expect(shareOfColour(pair.untouched, BOTTOM_BAR, BACKGROUND)).to.be.below(0.5);
    });

    it('with removeAds:true, hides it without clicking: the page did not leave for the form\'s target', () => {
      expect(shareOfColour(pair.cleaned, BOTTOM_BAR, BACKGROUND)).to.equal(1);
    });

    itKeepsTheContentAndTheNavBar(() => pair);
  });

  describe('a page with a homemade newsletter modal, its backdrop and a scroll lock', () => {
    let pair: Pair;
    before(async () => {
      pair = await captureBoth(renderer, server.url('/overlay/newsletter'));
    });

    it('with removeAds:false, the backdrop darkens the content', () => {
      expect(shareOfColour(pair.untouched, CONTENT, CONTENT_COLOUR)).to.equal(0);
    });

    it('with removeAds:true, the modal and its backdrop are gone', () => {
      expect(shareOfColour(pair.cleaned, CONTENT, CONTENT_COLOUR)).to.equal(1);
      expect(shareOfColour(pair.cleaned, BANNER_CORNER, BACKGROUND)).to.equal(1);
      expect(shareOfColour(pair.cleaned, { x: 700, y: 300, width: 200, height: 200 }, BACKGROUND)).to.equal(1);
    });

    it('keeps the sticky navigation bar', () => {
      expect(shareOfColour(pair.cleaned, NAV, NAV_COLOUR)).to.equal(1);
    });
  });

  describe('an app whose whole page is a fixed, full-viewport scroller', () => {
    it('is captured the same with removeAds:true as with false', async () => {
      const pair = await captureBoth(renderer, server.url('/overlay/app-shell'));
      const whole: Region = { x: 0, y: 0, width: 1280, height: 720 };
      expect(shareOfColour(pair.untouched, CONTENT, CONTENT_COLOUR)).to.equal(1);
      expect(differingPixels(pair.untouched, pair.cleaned, whole)).to.equal(0);
    });
  });

  describe('without filter lists installed (the documented fallback)', () => {
    let withoutLists: Renderer;
    before(async () => {
      withoutLists = await startRenderer(testConfig({ FILTER_LISTS_DIR: '/nonexistent/ublock-origin/assets', RENDER_CONCURRENCY: '1' }));
    });

    it('starts, and still answers consent banners', async () => {
      const pair = await captureBoth(withoutLists, server.url('/consent/klaro'), 1000);
      expect(shareOfColour(pair.cleaned, BANNER_CORNER, BACKGROUND)).to.equal(1);
      expect(shareOfColour(pair.cleaned, CONSENT_STATE, REFUSED_COLOUR)).to.equal(1);
    });

    it('leaves ads in place, since nothing names them', async () => {
      const pair = await captureBoth(withoutLists, adServer.url('/ads'));
      expect(shareOfColour(pair.cleaned, AD_BY_CLASS, RED)).to.equal(1);
      expect(shareOfColour(pair.cleaned, AD_SCRIPT_SLOT, RED)).to.equal(1);
    });
  });
});
