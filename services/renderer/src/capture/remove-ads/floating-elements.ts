/**
 * Which elements of a page may be fixed or sticky, for the notice and overlay passes, found from the
 * style sheets instead of from the computed style of every element. On a long page that walk was
 * most of removeAds' cost: Node's fs.html has 15,600 elements, each asked twice per cleaning, and
 * 3 of them float.
 *
 * An element is fixed or sticky only where something says so: a style rule of the document (in any
 * sheet, adopted or @imported, inside @media, @supports, @layer, @container or nesting), its style
 * attribute, an animation, the browser's own style for the top layer (a modal dialog, an open
 * popover, a fullscreen element), or, for a shadow host, a style inside its shadow root. The list
 * holds every element one of these may apply to: a superset, of which the passes still read each
 * element's computed style. It is undefined where a sheet cannot be read (another origin's, served
 * without CORS, unless its load failed) or a rule's selector means something else outside it
 * (@scope), and where the readiness probe is missing: the passes then ask every element, as before.
 * What it cannot see: a closed shadow root the parser attached (declarative shadow DOM) whose
 * :host style floats its host.
 *
 * Self-contained: it is serialized into the page.
 */
export function mayFloatInPage(): Element[] | undefined {
  const probe = (window as unknown as Record<string, { shadowHosts(): Element[]; failedToLoad(element: Element): boolean } | undefined>)['__viewfinderReadiness'];
  if (!probe) return undefined;
  const ScopeRule = (window as unknown as { CSSScopeRule?: typeof CSSRule }).CSSScopeRule;
  // Values that can never compute to fixed or sticky; anything else (fixed, sticky, inherit, var(), revert) may.
  const neverFloats = /^(?:static|relative|absolute|initial|unset)$/i;
  const mayFloat = (style: CSSStyleDeclaration) => {
    const value = style.getPropertyValue('position').trim();
    return value !== '' && !neverFloats.test(value);
  };
  const selectors = new Set<string>();
  const scanSheet = (sheet: CSSStyleSheet): boolean => {
    // A sheet whose load failed (a font service the network guard refused) applies nothing.
    if (sheet.ownerNode instanceof Element && probe.failedToLoad(sheet.ownerNode)) return true;
    let rules: CSSRuleList;
    try {
      rules = sheet.cssRules;
    } catch {
      return false; // another origin's
    }
    return scan(rules, undefined);
  };
  const scan = (rules: CSSRuleList, parent: string | undefined): boolean => {
    for (const rule of Array.from(rules)) {
      if (rule instanceof CSSStyleRule) {
        // Chromium writes a nested rule's selector with its `&`, which stands for the parent's.
        const selector = parent === undefined ? rule.selectorText : rule.selectorText.replaceAll('&', `:is(${parent})`);
        if (mayFloat(rule.style)) selectors.add(selector);
        if (rule.cssRules.length > 0 && !scan(rule.cssRules, selector)) return false;
      } else if (rule instanceof CSSImportRule) {
        if (rule.styleSheet && !scanSheet(rule.styleSheet)) return false;
      } else if (ScopeRule && rule instanceof ScopeRule) {
        return false;
      } else if ('cssRules' in rule) {
        if (!scan((rule as CSSGroupingRule).cssRules, parent)) return false;
      } else if (parent !== undefined && 'style' in rule && mayFloat((rule as CSSStyleRule).style)) {
        selectors.add(parent); // declarations that follow nested rules apply to the parent's selector
      }
    }
    return true;
  };
  if (!Array.from(document.styleSheets).every(scanSheet) || !document.adoptedStyleSheets.every(scanSheet)) return undefined;

  const found = new Set<Element>();
  const add = (elements: ArrayLike<Element>) => {
    for (const element of Array.from(elements)) found.add(element);
  };
  try {
    for (const selector of selectors) add(document.querySelectorAll(selector));
  } catch {
    return undefined; // a selector CSS takes and querySelectorAll does not
  }
  // "all" too: `all: inherit` sets position.
  add(document.querySelectorAll('[style*="position" i], [style*="all" i]'));
  for (const topLayer of [':modal', ':popover-open', ':fullscreen']) {
    try {
      add(document.querySelectorAll(topLayer));
    } catch {
      // A pseudo-class this Chromium does not know: nothing can be in it.
    }
  }
  for (const animation of document.getAnimations()) {
    const target = (animation.effect as KeyframeEffect | null)?.target;
    if (target) found.add(target);
  }
  add(probe.shadowHosts());
  // Open shadow roots the parser attached (declarative shadow DOM) never went through attachShadow.
  add(Array.from(document.getElementsByTagName('*')).filter((element) => element.shadowRoot !== null));
  return Array.from(found)
    .filter((element) => element.isConnected)
    .sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
}

/** The source of a call to `pass(...args, mayFloatInPage())` in the page: both run in one evaluation. */
export function withFloatingElements(pass: (...args: never[]) => unknown, ...args: unknown[]): string {
  return `(${pass})(${[...args.map((arg) => JSON.stringify(arg)), `(${mayFloatInPage})()`].join(', ')})`;
}
