/**
 * A journey (docs/capture-options.md, "steps"): what a visitor does between the first page and the
 * picture, declared as data, never as script. The shapes and bounds live here, beside the renderer
 * that runs them (journey.ts), so that the API's schema and the renderer's own check of its wire are
 * one. There is no `evaluate` step on purpose: injectJs stays the only way to run script, with its
 * own key restrictions.
 */

export const MAX_STEPS = 50;
/** Mid-journey pictures: each is a viewport PNG carried in the JSON answer. */
export const MAX_JOURNEY_CAPTURES = 10;
/** The steps' JSON, all of them: a journey is a handful of actions, not a document. */
export const MAX_STEPS_JSON_LENGTH = 100_000;
export const DEFAULT_STEP_TIMEOUT_MS = 5000;
export const MAX_STEP_TIMEOUT_MS = 30_000;
export const MAX_FILL_VALUE_LENGTH = 4096;
export const MAX_CREDENTIALS = 20;
export const MAX_SCROLL_PIXELS = 100_000;
const MAX_SELECTOR = 1024;
const MAX_URL = 8192;
/** A credential's name (fill.valueFrom) and a mid-journey capture's name. */
export const NAME_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';

export const STEP_ACTIONS = ['goto', 'fill', 'click', 'press', 'select', 'check', 'uncheck', 'hover', 'scroll', 'waitFor', 'capture'] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

/** Why a step failed, as the report names it (journey.ts). */
export const FAILURE_REASONS = ['selector-not-visible', 'navigation-refused', 'navigation-failed', 'timeout', 'action-failed'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

interface StepBase {
  /** Milliseconds this step may take; DEFAULT_STEP_TIMEOUT_MS when absent. */
  timeout?: number;
}
export type JourneyStep = StepBase &
  (
    | { action: 'goto'; url: string }
    /** On the wire `value` only: the API resolves valueFrom from the request's credentials. */
    | { action: 'fill'; selector: string; value?: string; valueFrom?: string }
    | { action: 'click' | 'check' | 'uncheck' | 'hover'; selector: string }
    | { action: 'press'; key: string; selector?: string }
    | { action: 'select'; selector: string; value?: string; values?: string[] }
    | { action: 'scroll'; selector?: string; x?: number; y?: number }
    | { action: 'waitFor'; selector?: string; state?: 'visible' | 'hidden'; url?: string; networkIdle?: true }
    | { action: 'capture'; name: string }
  );

const selector = { type: 'string', minLength: 1, maxLength: MAX_SELECTOR } as const;
const timeout = { type: 'integer', minimum: 1, maximum: MAX_STEP_TIMEOUT_MS, description: `Milliseconds this step may take (default ${DEFAULT_STEP_TIMEOUT_MS}).` } as const;
/** `required` with its properties named beside it, as ajv's strict mode wants. */
const has = (...names: string[]) => ({ required: names, properties: Object.fromEntries(names.map((name) => [name, true])) });
const pixels = { type: 'integer', minimum: -MAX_SCROLL_PIXELS, maximum: MAX_SCROLL_PIXELS } as const;

/** Each action's fields; `action` and `timeout` are every step's. Position i of this list is the schema of STEP_ACTIONS' rule i (stepRules). */
const actionFields = (wire: boolean): Record<StepAction, { required: string[]; properties: Record<string, unknown>; oneOf?: unknown[] }> => ({
  // The API's ajv knows http-url; the renderer's wire checks the scheme, and its guard the rest.
  goto: { required: ['url'], properties: { url: { type: 'string', maxLength: MAX_URL, ...(wire ? { pattern: '^https?://' } : { format: 'http-url' }) } } },
  // On the wire a fill carries its value: the API has resolved valueFrom (resolveCredentials).
  fill: wire
    ? { required: ['selector', 'value'], properties: { selector, value: { type: 'string', maxLength: MAX_FILL_VALUE_LENGTH } } }
    : {
        required: ['selector'],
        properties: { selector, value: { type: 'string', maxLength: MAX_FILL_VALUE_LENGTH }, valueFrom: { type: 'string', pattern: NAME_PATTERN } },
        oneOf: [has('value'), has('valueFrom')],
      },
  click: { required: ['selector'], properties: { selector } },
  press: { required: ['key'], properties: { key: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[\\x21-\\x7e]+$' }, selector } },
  select: {
    required: ['selector'],
    properties: { selector, value: { type: 'string', maxLength: MAX_SELECTOR }, values: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', maxLength: MAX_SELECTOR } } },
    oneOf: [has('value'), has('values')],
  },
  check: { required: ['selector'], properties: { selector } },
  uncheck: { required: ['selector'], properties: { selector } },
  hover: { required: ['selector'], properties: { selector } },
  scroll: { required: [], properties: { selector, x: pixels, y: pixels }, oneOf: [has('selector'), { anyOf: [has('x'), has('y')], not: has('selector') }] },
  waitFor: {
    required: [],
    properties: { selector, state: { type: 'string', enum: ['visible', 'hidden'] }, url: { type: 'string', minLength: 1, maxLength: MAX_URL }, networkIdle: { const: true } },
    oneOf: [has('selector'), { ...has('url'), not: has('state') }, { ...has('networkIdle'), not: has('state') }],
  },
  capture: { required: ['name'], properties: { name: { type: 'string', pattern: NAME_PATTERN } } },
});

/** What each action takes, in the words of a 400. */
export const STEP_SHAPES: Record<StepAction, string> = {
  goto: '{"action": "goto", "url": an http(s) URL}',
  fill: '{"action": "fill", "selector": ..., and "value" or "valueFrom" (a credential\'s name), not both}',
  click: '{"action": "click", "selector": ...}',
  press: '{"action": "press", "key": a key name such as "Enter", optional "selector" to focus first}',
  select: '{"action": "select", "selector": ..., and "value" or "values" (option values)}',
  check: '{"action": "check", "selector": ...}',
  uncheck: '{"action": "uncheck", "selector": ...}',
  hover: '{"action": "hover", "selector": ...}',
  scroll: '{"action": "scroll", and "selector", or "x" and/or "y" in pixels}',
  waitFor: '{"action": "waitFor", and "selector" (with optional "state": "visible" or "hidden"), or "url" (a pattern, * is any text), or "networkIdle": true}',
  capture: '{"action": "capture", "name": 1 to 64 letters, digits, _ . or -}',
};

/** The schema of `steps`: one `if action is X then X's fields` rule per action. `wire`: the renderer's form (fill with its value). */
function stepsSchemaFor(wire: boolean) {
  const fields = actionFields(wire);
  return {
    type: 'array',
    maxItems: MAX_STEPS,
    items: {
      type: 'object',
      required: ['action'],
      properties: { action: { type: 'string', enum: [...STEP_ACTIONS] }, timeout },
      allOf: STEP_ACTIONS.map((action) => {
        const { required, properties, oneOf } = fields[action];
        return {
          if: { properties: { action: { const: action } }, required: ['action'] },
          then: { additionalProperties: false, required, properties: { action: true, timeout: true, ...properties }, ...(oneOf ? { oneOf } : {}) },
        };
      }),
    },
    description:
      `Up to ${MAX_STEPS} actions done in order after the page has loaded and before the wait and the picture: goto, fill, click, press, select, check, uncheck, hover, scroll, waitFor, capture ` +
      '(docs/capture-options.md, "steps"). Every navigation they cause passes the network guard. fill values are write-only.',
  };
}

export const stepsSchema = stepsSchemaFor(false);
export const wireStepsSchema = stepsSchemaFor(true);

export const credentialsSchema = {
  type: 'object',
  writeOnly: true,
  maxProperties: MAX_CREDENTIALS,
  propertyNames: { pattern: NAME_PATTERN },
  additionalProperties: { type: 'string', maxLength: MAX_FILL_VALUE_LENGTH },
  description: `Named secrets that fill steps take with "valueFrom": at most ${MAX_CREDENTIALS} names (letters, digits, _ . -) to strings. Write-only: never logged, stored after the capture, or returned.`,
} as const;

/** The index of the step an ajv error points into (`/steps/3/...`), or undefined. */
export function stepIndexOf(instancePath: string): number | undefined {
  const match = /^\/steps\/(\d+)(\/|$)/.exec(instancePath);
  return match ? Number(match[1]) : undefined;
}

/** The checks a schema cannot make, on steps that passed it: their size, capture names, credentials they name (`holder`: where those are, as the 400 names it). */
export function stepsProblems(steps: readonly JourneyStep[] | undefined, credentials?: Record<string, string>, holder = 'credentials'): string[] {
  if (!steps) return [];
  const problems: string[] = [];
  if (JSON.stringify(steps).length > MAX_STEPS_JSON_LENGTH) problems.push(`steps must be at most ${MAX_STEPS_JSON_LENGTH} characters of JSON in all`);
  const names = steps.flatMap((step) => (step.action === 'capture' ? [step.name] : []));
  if (names.length > MAX_JOURNEY_CAPTURES) problems.push(`steps may hold at most ${MAX_JOURNEY_CAPTURES} capture steps`);
  const repeated = [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
  if (repeated.length > 0) problems.push(`capture step names must differ: ${repeated.map((name) => JSON.stringify(name)).join(', ')} ${repeated.length === 1 ? 'is' : 'are'} used twice`);
  for (const [i, step] of steps.entries()) {
    if (step.action !== 'fill' || step.valueFrom === undefined) continue;
    // Names a credential, never its value.
    if (!credentials || !Object.hasOwn(credentials, step.valueFrom)) problems.push(`steps[${i}].valueFrom names ${JSON.stringify(step.valueFrom)}, which ${holder} does not hold`);
  }
  return problems;
}

/** The steps as the renderer runs them: every valueFrom replaced by its credential's value. */
export function resolveCredentials(steps: readonly JourneyStep[], credentials: Record<string, string> = {}): JourneyStep[] {
  return steps.map((step) => {
    if (step.action !== 'fill' || step.valueFrom === undefined) return step;
    const { valueFrom, ...rest } = step;
    return { ...rest, value: credentials[valueFrom] ?? '' };
  });
}

/** The selectors of steps, named as the client wrote the field, for the renderer's check of CSS before navigation. */
export function stepSelectors(steps: readonly JourneyStep[] | undefined): { field: string; selector: string }[] {
  return (steps ?? []).flatMap((step, i) => ('selector' in step && step.selector !== undefined ? [{ field: `steps[${i}].selector`, selector: step.selector }] : []));
}
