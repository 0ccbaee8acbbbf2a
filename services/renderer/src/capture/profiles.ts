import { KnownDevices, type Viewport } from 'puppeteer-core';

export const PROFILE_NAMES = ['standard', 'high', 'retina', 'mobile'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface Profile {
  name: ProfileName;
  /** CSS pixels and device scale factor, as ARCHITECTURE.md defines each profile. */
  viewport: Required<Pick<Viewport, 'width' | 'height' | 'deviceScaleFactor' | 'isMobile' | 'hasTouch'>>;
  /** Set only where the profile emulates a different device. */
  userAgent?: string;
}

/** The iPhone SE has exactly the mobile profile's 375x667 CSS viewport at scale 2. */
const MOBILE_USER_AGENT = KnownDevices['iPhone SE'].userAgent;

export const PROFILES: Readonly<Record<ProfileName, Profile>> = {
  standard: { name: 'standard', viewport: { width: 1280, height: 720, deviceScaleFactor: 1, isMobile: false, hasTouch: false } },
  high: { name: 'high', viewport: { width: 1920, height: 1080, deviceScaleFactor: 1, isMobile: false, hasTouch: false } },
  retina: { name: 'retina', viewport: { width: 2560, height: 1440, deviceScaleFactor: 2, isMobile: false, hasTouch: false } },
  mobile: {
    name: 'mobile',
    viewport: { width: 375, height: 667, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
    userAgent: MOBILE_USER_AGENT,
  },
};

export const DEFAULT_PROFILE: ProfileName = 'standard';
