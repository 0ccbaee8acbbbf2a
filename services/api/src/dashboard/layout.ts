import type { Context } from 'koa';
import { html, type HtmlValue, type SafeHtml } from './html.ts';

/**
 * The page shell and the response headers every dashboard answer carries. The CSP allows only
 * this service's own stylesheet and script (no inline script or style, nothing from elsewhere);
 * `img-src data:` is for the Try it screenshot, which arrives as a data URI (monitor pictures are
 * served by the dashboard itself).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function setSecurityHeaders(ctx: Context): void {
  ctx.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    // Pages show account data and sometimes a key shown once: never keep them in any cache.
    'Cache-Control': 'no-store',
  });
}

export type Section = 'sites' | 'keys' | 'destinations' | 'usage' | 'try' | 'jobs' | 'monitors';

const SECTIONS: { id: Section; label: string; href: string }[] = [
  { id: 'sites', label: 'Sites', href: '/dashboard/sites' },
  { id: 'keys', label: 'API keys', href: '/dashboard/keys' },
  { id: 'destinations', label: 'Storage', href: '/dashboard/destinations' },
  { id: 'usage', label: 'Usage', href: '/dashboard/usage' },
  { id: 'try', label: 'Try it', href: '/dashboard/try' },
  { id: 'jobs', label: 'Jobs', href: '/dashboard/jobs' },
  { id: 'monitors', label: 'Monitors', href: '/dashboard/monitors' },
];

export interface SignedInShell {
  email: string;
  accountName: string;
  csrfToken: string;
  section: Section;
}

export function sendPage(ctx: Context, title: string, main: HtmlValue, options: { status?: number; shell?: SignedInShell } = {}): void {
  setSecurityHeaders(ctx);
  ctx.status = options.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>\n${document(title, main, options.shell).value}`;
}

function document(title: string, main: HtmlValue, shell: SignedInShell | undefined): SafeHtml {
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Viewfinder</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">Viewfinder</span>
  ${shell && navigation(shell)}
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${main}
</main>
</body>
</html>`;
}

function navigation(shell: SignedInShell): SafeHtml {
  return html`<nav aria-label="Dashboard">
    <ul>
      ${SECTIONS.map(
        (section) => html`<li><a href="${section.href}"${section.id === shell.section ? html` aria-current="page"` : ''}>${section.label}</a></li>`,
      )}
    </ul>
  </nav>
  <form class="sign-out" method="post" action="/dashboard/sign-out">
    <span>${shell.email} · ${shell.accountName}</span>
    <input type="hidden" name="_csrf" value="${shell.csrfToken}">
    <button type="submit">Sign out</button>
  </form>`;
}
