import type { Page } from 'puppeteer-core';
import { mayFloatInPage, withFloatingElements } from './floating-elements.ts';
import { OVERLAY_LIMITS, sweepOverlaysInPage, type OverlaySweepResult } from './overlay-sweep.ts';
import { ACCEPT_LABEL, ACKNOWLEDGE_LABEL, NOTICE_TEXT, REJECT_LABEL } from './consent-words.ts';

/*
 * The heuristic pass, for consent notices that neither autoconsent's rules nor EasyList's cookie
 * list know: small bars fixed at the top or bottom of the viewport, boxes in a corner, and banners
 * inserted at the very top or bottom of <body>, which push the page down. The overlay sweep does
 * not touch them: they cover little of the viewport and are rarely dialogs.
 */

export const NOTICE_LIMITS = {
  /** A fixed or sticky notice sits within this share of the viewport's height from its top or bottom edge. */
  edgeShare: 0.25,
  /** A banner in the flow is at most this share of the viewport high; taller, it is the page. */
  maxInFlowHeightShare: 0.5,
  /** A notice says what it has to say in fewer characters than this; more is an article. */
  maxTextLength: 2500,
  /** An element holding this share of the page's text is the page itself... */
  maxTextShare: 0.5,
  /** ...once the page has at least this much text. */
  minPageTextForShare: 500,
  /** A control's label longer than this is a sentence, not a button's. */
  maxLabelLength: 60,
} as const;

const WORDS = { notice: NOTICE_TEXT, reject: REJECT_LABEL, acknowledge: ACKNOWLEDGE_LABEL, accept: ACCEPT_LABEL };

export interface NoticeSweepResult {
  /** Notices answered with a click on a refusal or an acknowledgement. */
  clicked: number;
  /** Notices hidden: they held only an "accept", or were still shown after the click. */
  hidden: number;
}

/**
 * Finds the notices in the main frame and answers each: a click on its refusal, else on its
 * acknowledgement ("OK", "Got it"); one that offers only consent is hidden, never accepted.
 * Resolves to how many were clicked and hidden; call hideNoticesLeft once the clicked ones' closing transitions ran.
 */
export function answerNotices(page: Page): Promise<NoticeSweepResult> {
  return page.evaluate(withFloatingElements(noticesInPage, NOTICE_LIMITS, WORDS, 'answer')) as Promise<NoticeSweepResult>;
}

export interface NoticesThenOverlays {
  notices: NoticeSweepResult;
  /** Absent when a notice was clicked: the overlays are swept once its closing transition ran. */
  swept?: OverlaySweepResult;
}

/**
 * answerNotices and, when it clicked nothing, sweepOverlays in the same evaluation: one round trip
 * for most pages, and one look at which elements may float for both.
 */
const NOTICES_THEN_OVERLAYS = `(() => {
  const mayFloat = (${mayFloatInPage})();
  const notices = (${noticesInPage})(${JSON.stringify(NOTICE_LIMITS)}, ${JSON.stringify(WORDS)}, 'answer', mayFloat);
  return notices.clicked > 0 ? { notices } : { notices, swept: (${sweepOverlaysInPage})(${JSON.stringify(OVERLAY_LIMITS)}, mayFloat) };
})()`;

export function answerNoticesThenSweep(page: Page): Promise<NoticesThenOverlays> {
  return page.evaluate(NOTICES_THEN_OVERLAYS) as Promise<NoticesThenOverlays>;
}

/** Hides every notice still shown: what was only-accept, or did not close when clicked. */
export function hideNoticesLeft(page: Page): Promise<number> {
  return (page.evaluate(withFloatingElements(noticesInPage, NOTICE_LIMITS, WORDS, 'hide')) as Promise<NoticeSweepResult>).then((result) => result.hidden);
}

/** `mayFloat` (floating-elements.ts), in document order, spares it asking every element. Self-contained: it is serialized into the page. */
function noticesInPage(limits: typeof NOTICE_LIMITS, words: typeof WORDS, mode: 'answer' | 'hide', mayFloat?: Element[]): NoticeSweepResult {
  const result: NoticeSweepResult = { clicked: 0, hidden: 0 };
  const body = document.body;
  if (!body || window.innerHeight === 0) return result;
  const noticeText = new RegExp(words.notice, 'i');
  const labels = { reject: new RegExp(words.reject), acknowledge: new RegExp(words.acknowledge), accept: new RegExp(words.accept) };

  // Every element, open shadow trees included: a banner built as a web component lives in one.
  const children = (node: Element | ShadowRoot): Element[] => [
    ...Array.from(node.children),
    ...(node instanceof Element && node.shadowRoot ? Array.from(node.shadowRoot.children) : []),
  ];
  // innerText leaves shadow trees out; their rendered text is added, their style sheets are not.
  const shadowText = (shadow: ShadowRoot): string =>
    Array.from(shadow.children, (child) => (child instanceof HTMLElement && child.tagName !== 'STYLE' ? `${child.innerText} ${textOf(child, false)}` : '')).join(' ');
  const textOf = (element: Element, own = true): string => {
    const parts = own ? [element instanceof HTMLElement ? element.innerText : (element.textContent ?? '')] : [];
    for (const inner of [element, ...Array.from(element.querySelectorAll('*'))]) if (inner.shadowRoot) parts.push(shadowText(inner.shadowRoot));
    return parts.join(' ');
  };
  const deepQuery = (root: Element | ShadowRoot, selector: string): Element[] => {
    const found = Array.from(root.querySelectorAll(selector));
    for (const inner of [root instanceof Element ? root : undefined, ...Array.from(root.querySelectorAll('*'))]) {
      if (inner?.shadowRoot) found.push(...deepQuery(inner.shadowRoot, selector));
    }
    return found;
  };

  // Laid out once, and only when needed: on a long page, all of its text is not free.
  let pageText: number | undefined;
  const pageTextLength = () => (pageText ??= body.innerText.length);
  if (!mayFloat) {
    // Before a walk over every element: nothing on the page speaks of cookies, consent or privacy,
    // and no shadow tree could, so no notice. (Each candidate's own text is checked below anyway.)
    const bodyText = body.innerText;
    pageText = bodyText.length;
    if (!noticeText.test(bodyText) && !Array.from(body.querySelectorAll('*')).some((element) => element.shadowRoot)) return result;
  }

  const visible = (element: Element) => {
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return undefined;
    const rect = element.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0 ? { style, rect } : undefined;
  };

  // Outermost fixed or sticky elements near the top or bottom edge of the viewport.
  const candidates = new Set<Element>();
  const edge = window.innerHeight * limits.edgeShare;
  /** Shown, fixed or sticky, in the viewport and near its top or bottom edge. */
  const floatsAtAnEdge = (element: Element, style: CSSStyleDeclaration) => {
    if (style.position !== 'fixed' && style.position !== 'sticky') return false;
    const rect = element.getBoundingClientRect();
    const nearEdge = rect.top <= edge || rect.bottom >= window.innerHeight - edge;
    return rect.width > 0 && rect.height > 0 && rect.bottom > 0 && rect.top < window.innerHeight && nearEdge;
  };
  const walk = (node: Element | ShadowRoot) => {
    for (const element of children(node)) {
      const style = getComputedStyle(element);
      if (style.display === 'none') continue;
      if (floatsAtAnEdge(element, style)) {
        candidates.add(element);
        continue;
      }
      walk(element);
    }
  };
  if (mayFloat) {
    // The same elements the walk finds: the outermost of those that float at an edge (an element
    // inside a hidden one has no box), and in open shadow roots, which are walked as before.
    const inCandidate = (element: Element) => Array.from(candidates).some((candidate) => candidate.contains(element));
    for (const element of mayFloat) {
      if (element === body || !body.contains(element) || inCandidate(element)) continue;
      if (floatsAtAnEdge(element, getComputedStyle(element))) candidates.add(element);
      else if (element.shadowRoot) walk(element.shadowRoot);
    }
  } else {
    walk(body);
  }
  // And banners in the flow: the first and the last element of <body> that shows.
  const shown = Array.from(body.children).filter(
    (element) => !['SCRIPT', 'STYLE', 'LINK', 'NOSCRIPT', 'TEMPLATE'].includes(element.tagName) && visible(element),
  );
  for (const element of [shown[0], shown[shown.length - 1]]) {
    const box = element && visible(element);
    if (box && box.rect.height <= window.innerHeight * limits.maxInFlowHeightShare) candidates.add(element);
  }

  const labelOf = (control: Element) =>
    ((control as HTMLElement).innerText || (control as HTMLInputElement).value || control.getAttribute('aria-label') || control.getAttribute('title') || '')
      .toLowerCase()
      .replace(/[.,!?:;"“”«»()[\]]/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  // A link that leads elsewhere (the privacy policy) is never clicked, nor a button that submits a
  // form: the capture would leave the page. Such a notice is hidden instead.
  const clickable = (control: Element) => {
    if ((control as HTMLButtonElement | HTMLInputElement).type === 'submit' && (control as HTMLButtonElement).form) return false;
    if (control.tagName !== 'A' || control.getAttribute('role') === 'button') return true;
    const href = control.getAttribute('href');
    return href === null || href === '' || href.startsWith('#') || href.startsWith('javascript:');
  };

  for (const element of candidates) {
    if (!element.isConnected || !visible(element)) continue;
    if (element.matches('main, [role="main"], nav, [role="navigation"], article') || element.querySelector('main, [role="main"], article')) continue;
    const text = textOf(element);
    if (text.length > limits.maxTextLength || !noticeText.test(text)) continue;
    // Holds most of the page's text (the page's text is needed only for a candidate with enough of its own).
    const mostOfThePage =
      text.length >= limits.minPageTextForShare * limits.maxTextShare && pageTextLength() >= limits.minPageTextForShare && text.length >= pageTextLength() * limits.maxTextShare;
    if (mostOfThePage) continue;

    const controls = deepQuery(element, 'button, [role="button"], input[type="button"], input[type="submit"], a').filter((control) => visible(control));
    const kinds = { reject: [] as Element[], acknowledge: [] as Element[], accept: [] as Element[] };
    for (const control of controls) {
      const label = labelOf(control);
      if (label.length === 0 || label.length > limits.maxLabelLength) continue;
      if (labels.reject.test(label)) kinds.reject.push(control);
      else if (labels.acknowledge.test(label)) kinds.acknowledge.push(control);
      else if (labels.accept.test(label)) kinds.accept.push(control);
    }
    // A box about privacy with nothing to answer is not a notice.
    if (kinds.reject.length + kinds.acknowledge.length + kinds.accept.length === 0) continue;
    const answer = kinds.reject.find(clickable) ?? kinds.acknowledge.find(clickable);
    // The page's text as it was before this pass changed anything, for the candidates after this one.
    pageTextLength();
    if (mode === 'answer' && answer) {
      (answer as HTMLElement).click();
      result.clicked += 1;
    } else if (mode === 'hide' || !answer) {
      (element as HTMLElement).style.setProperty('display', 'none', 'important');
      result.hidden += 1;
    }
  }
  return result;
}
