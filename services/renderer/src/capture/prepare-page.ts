import type { Page } from 'puppeteer-core';
import { PROFILES, type Profile } from './profiles.ts';
import { installReadinessProbe, OWN_NODE_ATTRIBUTE, type ProbeOptions } from './readiness-probe.ts';

export const PROBE_OPTIONS: ProbeOptions = { timerHorizonMs: 3000, maxTimerChainDepth: 3, ownNodeAttribute: OWN_NODE_ATTRIBUTE };

/** The profile each page currently emulates, so that a page already at the right one is not reset. */
const emulatedProfiles = new WeakMap<Page, Profile>();

export async function emulateProfile(page: Page, profile: Profile): Promise<void> {
  const current = emulatedProfiles.get(page);
  if (current === profile) return;
  await page.setViewport(profile.viewport);
  if (profile.userAgent !== current?.userAgent) {
    await page.setUserAgent({ userAgent: profile.userAgent ?? (await page.browser().userAgent()) });
  }
  emulatedProfiles.set(page, profile);
}

/**
 * Readies a spare page before any capture takes it, off the critical path: the most common
 * profile, the readiness probe in every document, and answers to whatever would block a capture:
 * dialogs (alert, confirm, prompt, beforeunload) are dismissed and pop-up windows closed.
 */
export async function prepareCapturePage(page: Page): Promise<void> {
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
  page.on('popup', (popup) => void popup?.close().catch(() => undefined));
  await page.evaluateOnNewDocument(installReadinessProbe, PROBE_OPTIONS);
  await emulateProfile(page, PROFILES.standard);
}
