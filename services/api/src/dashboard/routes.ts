import type { Middleware } from 'koa';
import type { Route } from '../../../../lib/http/routes.ts';
import { serveAsset } from './assets.ts';
import { signedInPage, type DashboardDeps, type PageHandler } from './deps.ts';
import { formBody } from './forms.ts';
import type { Section } from './layout.ts';
import { ISSUED_PATH } from './issued-once.ts';
import {
  confirmKeyDeletion,
  confirmKeyRegeneration,
  createKey,
  deleteKey,
  KEY_FORM_FIELDS,
  LINK_FORM_FIELDS,
  regenerateKey,
  showIssuedKey,
  showKeys,
  signLink,
} from './pages/keys.ts';
import { confirmSiteDeletion, createSite, deleteSite, showSite, showSites, SITE_FORM_FIELDS, updateSite } from './pages/sites.ts';
import { captureTry, showTry, TRY_FORM_FIELDS } from './pages/try.ts';
import { showUsage } from './pages/usage.ts';
import { confirmDestinationDeletion, createDestination, deleteDestination, DESTINATION_FORM_FIELDS, showDestinations } from './pages/destinations.ts';
import { showJobs } from './pages/jobs.ts';
import {
  ACCEPT_FORM_FIELDS,
  acceptBaseline,
  confirmMonitorDeletion,
  createMonitor,
  deleteMonitor,
  MONITOR_FORM_FIELDS,
  monitorImage,
  runMonitorNow,
  showMonitor,
  showMonitorEdit,
  showMonitors,
  showNewMonitor,
  SUSPEND_FORM_FIELDS,
  suspendMonitor,
  updateMonitor,
} from './pages/monitors.ts';
import { showSignIn, SIGN_IN_FIELDS, signIn, signOut } from './sign-in.ts';

/**
 * The dashboard (MODE=hosted): server-rendered pages under /dashboard, over the same management
 * operations as the JSON API. Forms post, then redirect (POST → 303 → GET).
 */
export function dashboardRoutes(deps: DashboardDeps): Route[] {
  const page = (method: 'GET' | 'POST', path: string, section: Section, handler: PageHandler, fields: readonly string[] = []): Route => ({
    method,
    path,
    handlers: signedInPage(deps, method, section, handler, fields),
  });
  const toSites: Middleware = (ctx) => {
    ctx.status = 303;
    ctx.redirect('/dashboard/sites');
  };
  return [
    { method: 'GET', path: '/dashboard', handlers: [toSites] },
    { method: 'GET', path: '/dashboard/assets/:file', handlers: [serveAsset()] },
    { method: 'GET', path: '/dashboard/sign-in', handlers: [showSignIn()] },
    { method: 'POST', path: '/dashboard/sign-in', handlers: [...formBody(deps.bodyLimitBytes, SIGN_IN_FIELDS), signIn(deps)] },
    { method: 'POST', path: '/dashboard/sign-out', handlers: [...formBody(deps.bodyLimitBytes), signOut(deps)] },

    page('GET', '/dashboard/sites', 'sites', showSites),
    page('POST', '/dashboard/sites', 'sites', createSite, SITE_FORM_FIELDS),
    page('GET', '/dashboard/sites/:siteId', 'sites', showSite),
    page('POST', '/dashboard/sites/:siteId', 'sites', updateSite, SITE_FORM_FIELDS),
    page('GET', '/dashboard/sites/:siteId/delete', 'sites', confirmSiteDeletion),
    page('POST', '/dashboard/sites/:siteId/delete', 'sites', deleteSite),

    page('GET', '/dashboard/keys', 'keys', showKeys),
    page('POST', '/dashboard/keys', 'keys', createKey, KEY_FORM_FIELDS),
    page('GET', ISSUED_PATH, 'keys', showIssuedKey),
    page('POST', '/dashboard/keys/link', 'keys', signLink, LINK_FORM_FIELDS),
    page('GET', '/dashboard/keys/:keyId/regenerate', 'keys', confirmKeyRegeneration),
    page('POST', '/dashboard/keys/:keyId/regenerate', 'keys', regenerateKey),
    page('GET', '/dashboard/keys/:keyId/delete', 'keys', confirmKeyDeletion),
    page('POST', '/dashboard/keys/:keyId/delete', 'keys', deleteKey),

    page('GET', '/dashboard/destinations', 'destinations', showDestinations),
    page('POST', '/dashboard/destinations', 'destinations', createDestination, DESTINATION_FORM_FIELDS),
    page('GET', '/dashboard/destinations/:name/delete', 'destinations', confirmDestinationDeletion),
    page('POST', '/dashboard/destinations/:name/delete', 'destinations', deleteDestination),

    page('GET', '/dashboard/usage', 'usage', showUsage),
    page('GET', '/dashboard/try', 'try', showTry),
    page('POST', '/dashboard/try', 'try', captureTry(deps), TRY_FORM_FIELDS),
    page('GET', '/dashboard/jobs', 'jobs', showJobs(deps)),

    page('GET', '/dashboard/monitors', 'monitors', showMonitors(deps)),
    page('POST', '/dashboard/monitors', 'monitors', createMonitor(deps), MONITOR_FORM_FIELDS),
    page('GET', '/dashboard/monitors/new', 'monitors', showNewMonitor(deps)),
    page('GET', '/dashboard/monitors/:monitorId', 'monitors', showMonitor(deps)),
    page('GET', '/dashboard/monitors/:monitorId/images/:imageId', 'monitors', monitorImage(deps)),
    page('POST', '/dashboard/monitors/:monitorId/run', 'monitors', runMonitorNow(deps)),
    page('POST', '/dashboard/monitors/:monitorId/baseline', 'monitors', acceptBaseline(deps), ACCEPT_FORM_FIELDS),
    page('POST', '/dashboard/monitors/:monitorId/suspend', 'monitors', suspendMonitor(deps), SUSPEND_FORM_FIELDS),
    page('GET', '/dashboard/monitors/:monitorId/edit', 'monitors', showMonitorEdit(deps)),
    page('POST', '/dashboard/monitors/:monitorId/edit', 'monitors', updateMonitor(deps), MONITOR_FORM_FIELDS),
    page('GET', '/dashboard/monitors/:monitorId/delete', 'monitors', confirmMonitorDeletion(deps)),
    page('POST', '/dashboard/monitors/:monitorId/delete', 'monitors', deleteMonitor(deps)),
  ];
}
