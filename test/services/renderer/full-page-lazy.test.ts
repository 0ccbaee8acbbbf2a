import { expect } from 'chai';
import type { Renderer } from '../../../services/renderer/src/renderer.ts';
import { LAZY_COLOURS, LAZY_IMAGE_TOP } from '../../support/fidelity-pages.ts';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server.ts';
import { decodeDataUri, sharedRenderer } from '../../support/harness.ts';

describe('full-page captures with lazy content (real Chromium)', () => {
  let fixtures: FixtureServer;
  let renderer: Renderer;

  before(async () => {
    fixtures = await startFixtureServer();
    renderer = await sharedRenderer();
  });
  after(() => fixtures.close());

  const fullPage = async (path: string) => {
    const result = await renderer.capture({ url: fixtures.url(path), quality: 'standard', fullPage: true, removeAds: false });
    return { result, image: decodeDataUri(`data:image/png;base64,${result.image.toString('base64')}`) };
  };

  it('shows every loading="lazy" image down the page loaded', async () => {
    const { image } = await fullPage('/lazy');
    for (const [index, colour] of LAZY_COLOURS.entries()) {
      const y = LAZY_IMAGE_TOP(index) + 100;
      if (y >= image.png.height) continue; // beyond the test's height cap
      expect(image.rgb(300, y), `image ${index} at y=${y}`).to.deep.equal(colour);
    }
  });

  it('scrolls through a page whose script reveals content only when it scrolls into view', async () => {
    const { image } = await fullPage('/scroll-reveal');
    expect(image.rgb(200, 3150)).to.deep.equal([0, 160, 0]);
  });

  /**
   * A page whose observer turns #target green once it is in view (`rootMargin` given), and whose
   * #scrolled bar turns red if the page was ever scrolled (polled on animation frames, which no
   * probe follows).
   */
  const observedPage = (targetTop: number, rootMargin: string) =>
    `/echo?html=${encodeURIComponent(`<body style="margin:0;height:3000px">
<div id="scrolled" style="position:absolute;top:0;left:0;width:100px;height:50px;background:#00ff00"></div>
<div id="target" style="position:absolute;top:${targetTop}px;left:0;width:200px;height:100px;background:#ff0000"></div>
<script>
const poll = () => { if (scrollY > 0) document.getElementById('scrolled').style.background = '#ff0000'; requestAnimationFrame(poll); };
requestAnimationFrame(poll);
new IntersectionObserver((entries) => { if (entries.some((entry) => entry.isIntersecting)) document.getElementById('target').style.background = '#00ff00'; },
  { rootMargin: '${rootMargin}' }).observe(document.getElementById('target'));
</script>`)}`;

  it('does not scroll a page whose observed elements are all in view at the top (a sticky header)', async () => {
    const { image } = await fullPage(observedPage(100, '0px'));
    expect(image.rgb(50, 150)).to.deep.equal([0, 255, 0]); // the target, seen at once
    expect(image.rgb(50, 25)).to.deep.equal([0, 255, 0]); // never scrolled
  });

  it("scrolls a page whose observed element is in the viewport but below its observer's root (a negative rootMargin)", async () => {
    const { image } = await fullPage(observedPage(500, '0px 0px -50% 0px'));
    expect(image.rgb(50, 25)).to.deep.equal([255, 0, 0]); // scrolled
  });

  it('shows a fixed header once, at the top, and keeps a 100vh hero at the viewport height', async () => {
    const { image } = await fullPage('/sticky-hero');
    expect(image.png.height).to.equal(720 + 2000);
    expect(image.rgb(640, 30)).to.deep.equal([255, 0, 0]); // header
    expect(image.rgb(640, 400)).to.deep.equal([0, 0, 255]); // hero
    expect(image.rgb(640, 715)).to.deep.equal([0, 0, 255]); // hero still at 720 CSS px
    expect(image.rgb(640, 760)).to.deep.equal([0, 255, 0]); // the rest, no header repeated here
    expect(image.rgb(640, 1500)).to.deep.equal([0, 255, 0]);
    expect(image.rgb(640, 2700)).to.deep.equal([0, 255, 0]);
  });
});
