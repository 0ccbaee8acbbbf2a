import type http from 'node:http';
import { readFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { page } from './fixture-server.ts';

/**
 * Pages that test when a capture is complete, and how the renderer copes with hostile input.
 * Each is deterministic once it has settled, so a capture can be compared with a ground truth
 * taken after a long fixed wait.
 */

const FONT = readFileSync('/usr/share/fonts/truetype/liberation/LiberationMono-Bold.ttf');

/** A solid PNG of one colour, for image-heavy and lazy pages. */
export function solidPng(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < png.data.length; i += 4) {
    png.data[i] = r;
    png.data[i + 1] = g;
    png.data[i + 2] = b;
    png.data[i + 3] = 255;
  }
  return PNG.sync.write(png);
}

/** Colours of the lazy page's images, top to bottom; the test checks each one. */
export const LAZY_COLOURS: [number, number, number][] = [
  [255, 0, 0],
  [0, 160, 0],
  [0, 0, 255],
  [255, 160, 0],
  [160, 0, 160],
  [0, 160, 160],
];
export const LAZY_IMAGE_TOP = (index: number) => 300 + index * 900;

const html = (res: http.ServerResponse, body: string, status = 200, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(body);
};

const later = (res: http.ServerResponse, ms: number, send: () => void) => {
  const timer = setTimeout(send, ms);
  res.once('close', () => clearTimeout(timer));
};

/** Answers the request and returns true when the path is one of these pages. */
export function serveFidelityPage(url: URL, res: http.ServerResponse): boolean {
  const param = (name: string, fallback: number) => Number(url.searchParams.get(name) ?? fallback);
  switch (url.pathname) {
    // --- assets ---
    case '/asset/font.ttf':
      later(res, param('delay', 800), () => {
        res.writeHead(200, { 'content-type': 'font/ttf', 'cache-control': 'no-store' });
        res.end(FONT);
      });
      return true;
    case '/asset/solid.png': {
      const colour = (url.searchParams.get('rgb') ?? '255,0,0').split(',').map(Number) as [number, number, number];
      later(res, param('delay', 0), () => {
        res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
        res.end(solidPng(param('w', 200), param('h', 200), colour));
      });
      return true;
    }
    case '/asset/data.json':
      later(res, param('delay', 2200), () => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ items: ['alpha', 'beta', 'gamma', 'delta'] }));
      });
      return true;
    case '/asset/hang':
      res.once('close', () => undefined); // never answers
      return true;

    // --- pages ---
    case '/slow-font':
      html(
        res,
        page('<p id="t">Viewfinder waits for fonts</p>', {
          style: `@font-face{font-family:Slow;src:url(/asset/font.ttf?delay=${param('delay', 800)}) format("truetype");font-display:block}
            #t{font:bold 64px Slow, serif;margin:40px}`,
        }),
      );
      return true;

    case '/data': {
      const delay = param('delay', 2200);
      html(
        res,
        page('<main id="app"><p>Loading…</p></main>', {
          style: '#app{font:32px sans-serif;margin:40px} li{padding:12px;background:#0057b8;color:#fff;margin:8px 0}',
          head: `<script>addEventListener('DOMContentLoaded', async () => {
            const data = await (await fetch('/asset/data.json?delay=${delay}')).json();
            document.getElementById('app').innerHTML = '<ul>' + data.items.map((i) => '<li>' + i + '</li>').join('') + '</ul>';
          })</script>`,
        }),
      );
      return true;
    }

    case '/spa':
      // Renders in three steps: a shell, then a fetch, then a late image.
      html(
        res,
        page('<div id="root"></div>', {
          style: '#root{font:28px sans-serif;margin:30px} .card{height:120px;margin:10px 0;background:#eee}',
          head: `<script>addEventListener('DOMContentLoaded', () => {
            const root = document.getElementById('root');
            root.innerHTML = '<h1>Dashboard</h1><div class="card"></div><div class="card"></div>';
            setTimeout(async () => {
              const data = await (await fetch('/asset/data.json?delay=300')).json();
              root.querySelectorAll('.card').forEach((card, i) => { card.textContent = data.items[i]; card.style.background = '#cde'; });
              const img = new Image(); img.src = '/asset/solid.png?rgb=0,128,0&w=300&h=100&delay=200'; root.append(img);
            }, 50);
          })</script>`,
        }),
      );
      return true;

    case '/images':
      html(
        res,
        page(
          Array.from({ length: 12 }, (_, i) => `<img width="200" height="150" src="/asset/solid.png?rgb=${(i * 20) % 255},${(i * 50) % 255},${(i * 90) % 255}&w=200&h=150&delay=${100 + i * 40}">`).join(''),
          { style: 'img{margin:4px}' },
        ),
      );
      return true;

    case '/lazy':
      html(
        res,
        page(
          LAZY_COLOURS.map(
            (rgb, i) =>
              `<img loading="lazy" width="400" height="300" style="position:absolute;left:100px;top:${LAZY_IMAGE_TOP(i)}px" src="/asset/solid.png?rgb=${rgb.join(',')}&w=400&h=300&delay=150">`,
          ).join(''),
          { style: `body{height:${LAZY_IMAGE_TOP(LAZY_COLOURS.length) + 200}px;position:relative}` },
        ),
      );
      return true;

    case '/scroll-reveal':
      // A block far down the page that a script turns green only once it scrolls into view.
      html(
        res,
        page('<div id="reveal"></div>', {
          style: 'body{height:4000px;position:relative} #reveal{position:absolute;top:3000px;left:0;width:400px;height:300px;background:#ff0000}',
          head: `<script>addEventListener('DOMContentLoaded', () => {
            const target = document.getElementById('reveal');
            new IntersectionObserver((entries) => { if (entries.some((entry) => entry.isIntersecting)) target.style.background = '#00a000'; }).observe(target);
          })</script>`,
        }),
      );
      return true;

    case '/fade-in':
      html(res, page('<h1 id="h">Fading in</h1>', { style: '#h{margin:60px;font:64px sans-serif;animation:fade .6s ease-in both} @keyframes fade{from{opacity:0}to{opacity:1}}' }));
      return true;

    case '/long-document':
      html(
        res,
        page(Array.from({ length: 200 }, (_, i) => `<p>Paragraph ${i + 1}: Viewfinder renders the page the moment it is complete.</p>`).join(''), {
          style: 'body{font:18px serif;margin:40px}',
        }),
      );
      return true;

    case '/iframe':
      html(res, page(`<h1>Outer</h1><iframe width="600" height="300" src="/late-paint?after=400"></iframe>`));
      return true;

    case '/sticky-hero':
      // A fixed header and a 100vh hero: in a full-page capture the header must appear once, the hero keep its height.
      html(
        res,
        page('<header>Header</header><section class="hero"></section><section class="rest"></section>', {
          style: `header{position:fixed;top:0;left:0;right:0;height:60px;background:#ff0000;z-index:10}
            .hero{height:100vh;background:#0000ff} .rest{height:2000px;background:#00ff00}`,
        }),
      );
      return true;

    case '/client-redirect':
      html(res, page('<p>moving…</p>', { head: `<script>setTimeout(() => { location.href = '/late-paint?after=100'; }, 100)</script>` }));
      return true;

    // --- hostile input ---
    case '/never-loads':
      html(res, page('<h1 style="background:#00ff00;margin:0;height:200px">Content</h1><img src="/asset/hang">'));
      return true;
    // Replaces the page's frame and timer functions with ones that never call back.
    case '/no-callbacks': {
      // requestAnimationFrame, setTimeout and setInterval that never call back. ?height=N: N px tall,
      // and listening to scrolling, so that a full-page capture scrolls it; ?notice=1: a cookie
      // notice whose acknowledgement removeAds clicks.
      const height = param('height', 200);
      const notice = param('notice', 0)
        ? '<div style="position:fixed;bottom:0;left:0;right:0;height:80px;background:#333;color:#fff">We use cookies to improve your experience. <button onclick="this.parentNode.remove()">Got it</button></div>'
        : '';
      html(
        res,
        page(`<h1 style="background:#00ff00;margin:0;height:${height}px">Content</h1>${notice}`, {
          head: `<script>window.requestAnimationFrame = () => 0; window.setTimeout = () => 0; window.setInterval = () => 0;${height > 720 ? " addEventListener('scroll', () => {});" : ''}</script>`,
        }),
      );
      return true;
    }
    case '/redirect-loop':
      res.writeHead(302, { location: `/redirect-loop?n=${param('n', 0) + 1}` });
      res.end();
      return true;
    case '/dialogs':
      html(
        res,
        page('<h1 style="background:#00ff00;margin:0;height:200px">After dialogs</h1>', {
          head: `<script>alert('hello'); confirm('sure?'); prompt('name?'); addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'stay'; });</script>`,
        }),
      );
      return true;
    case '/popups':
      html(
        res,
        page('<h1 style="background:#00ff00;margin:0;height:200px">Popups</h1>', {
          head: `<script>if (!location.search) for (let i = 0; i < 5; i++) window.open('/popups?child=' + i, '_blank', 'width=300,height=300');</script>`,
        }),
      );
      return true;
    case '/download':
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.bin"' });
      res.end(Buffer.alloc(1024, 7));
      return true;
    case '/file.pdf':
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end('%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/MediaBox[0 0 200 200]/Parent 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF');
      return true;
    case '/file.json':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ hello: 'world' }));
      return true;
    case '/file.png':
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(solidPng(300, 200, [0, 0, 255]));
      return true;
    default:
      return false;
  }
}
