/**
 * The types against the contract: GET /api/openapi.json from the hosted service. Every object type
 * of the library names exactly the properties of its schema, every enum exactly its values, and
 * every operation of the document (but the operator's and the document's own) has a method. A
 * field added to the API without the library fails here.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as types from '../src/types.ts';
import { OPERATIONS } from '../src/index.ts';
import { service } from './service.ts';

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  additionalProperties?: Schema | boolean;
  content?: Record<string, { schema: Schema }>;
  requestBody?: Schema;
  responses?: Record<string, Schema>;
  operationId?: string;
};
type Doc = { paths: Record<string, Record<string, Schema>> };

let doc: Doc;
// In one suite: with --test-isolation=none a top-level hook would be every file's.
describe('the contract', () => {
  before(async () => {
    const svc = await service();
    const response = await fetch(`${svc.hosted.base}/api/openapi.json`);
    assert.equal(response.status, 200);
    doc = (await response.json()) as Doc;
  });

  const json = (schema: Schema | undefined): Schema => {
    const found = schema?.content?.['application/json']?.schema;
    assert.ok(found, 'a JSON schema');
    return found;
  };
  const body = (path: string, method: string): Schema => json(doc.paths[path]?.[method]?.requestBody);
  const answer = (path: string, method: string, status: number): Schema => json(doc.paths[path]?.[method]?.responses?.[status]);
  const props = (schema: Schema | undefined): Record<string, Schema> => {
    assert.ok(schema?.properties, 'an object schema');
    return schema.properties;
  };
  const sorted = (names: Iterable<string>) => [...names].sort();

  /** [what, the library's field list, the document's schema]. */
  function objects(): Array<[string, readonly string[], () => Schema]> {
    const capture = () => props(body('/api/screenshot', 'post'));
    const submit = () => body('/api/captures', 'post').anyOf?.[0] as Schema;
    const monitorBody = () => props(body('/api/monitors', 'post'));
    const monitor = () => answer('/api/monitors/{monitorId}', 'get', 200);
    const run = () => answer('/api/monitors/{monitorId}/runs', 'get', 200).items as Schema;
    const status = () => answer('/api/captures/{captureId}', 'get', 200);
    return [
      ['ScreenshotOptions (POST /api/screenshot)', types.SCREENSHOT_OPTION_FIELDS, () => body('/api/screenshot', 'post')],
      ['AsyncCaptureOptions (POST /api/captures)', types.ASYNC_CAPTURE_OPTION_FIELDS, submit],
      ['the batch form of POST /api/captures', ['captures'], () => body('/api/captures', 'post').anyOf?.[1] as Schema],
      ['a capture of a batch', types.ASYNC_CAPTURE_OPTION_FIELDS, () => props(body('/api/captures', 'post').anyOf?.[1]).captures?.items as Schema],
      ['ReportOptions', types.REPORT_OPTION_FIELDS, () => (capture().report?.anyOf ?? []).find((branch) => branch.type === 'object') as Schema],
      ['ReportChecks', types.REPORT_CHECKS_FIELDS, () => props((capture().report?.anyOf ?? []).find((branch) => branch.type === 'object')).checks as Schema],
      ['PdfOptions', types.PDF_FIELDS, () => capture().pdf as Schema],
      ['PdfMargin', types.PDF_MARGIN_FIELDS, () => props(capture().pdf).margin as Schema],
      ['Geolocation', types.GEOLOCATION_FIELDS, () => capture().geolocation as Schema],
      ['Cookie', types.COOKIE_FIELDS, () => capture().cookies?.items as Schema],
      ['Authorization', types.AUTHORIZATION_FIELDS, () => ({ properties: Object.assign({}, ...(capture().authorization?.oneOf ?? []).map(props)) })],
      ['ScreenshotResult', types.SCREENSHOT_RESULT_FIELDS, () => answer('/api/screenshot', 'post', 200)],
      ['AcceptedCapture', types.ACCEPTED_CAPTURE_FIELDS, () => answer('/api/captures', 'post', 202).anyOf?.[0] as Schema],
      ['the batch answer', ['captures'], () => answer('/api/captures', 'post', 202).anyOf?.[1] as Schema],
      ['CaptureStatus', types.CAPTURE_STATUS_FIELDS, status],
      ['WebhookDelivery', types.WEBHOOK_DELIVERY_FIELDS, () => props(status()).webhook as Schema],
      ['Site', types.SITE_FIELDS, () => answer('/api/sites/{siteId}', 'get', 200)],
      ['the site list', ['sites'], () => answer('/api/sites', 'get', 200)],
      ['ManagedBy', types.MANAGED_BY_FIELDS, () => props(answer('/api/sites/{siteId}', 'get', 200)).managedBy as Schema],
      ['SiteCreateParams', types.SITE_CREATE_FIELDS, () => body('/api/sites', 'post')],
      ['StorageOption', types.STORAGE_OPTION_FIELDS, () => capture().storage as Schema],
      ['StoredObject', types.STORED_OBJECT_FIELDS, () => props(answer('/api/screenshot', 'post', 200)).storage as Schema],
      ['Destination', types.DESTINATION_FIELDS, () => answer('/api/destinations/{name}', 'get', 200)],
      ['DestinationCreateParams', types.DESTINATION_CREATE_FIELDS, () => body('/api/destinations', 'post')],
      ['DestinationUpdateParams', types.DESTINATION_UPDATE_FIELDS, () => body('/api/destinations/{name}', 'patch')],
      ['SiteUpdateParams', types.SITE_UPDATE_FIELDS, () => body('/api/sites/{siteId}', 'patch')],
      ['ApiKey', types.API_KEY_FIELDS, () => props(answer('/api/keys', 'get', 200)).keys?.items as Schema],
      ['IssuedApiKey (create)', types.ISSUED_API_KEY_FIELDS, () => answer('/api/keys', 'post', 201)],
      ['IssuedApiKey (regenerate)', types.ISSUED_API_KEY_FIELDS, () => answer('/api/keys/{keyId}/regenerate', 'post', 200)],
      ['KeyCreateParams', types.KEY_CREATE_FIELDS, () => body('/api/keys', 'post')],
      ['Deleted', types.DELETED_FIELDS, () => answer('/api/keys/{keyId}', 'delete', 200)],
      ['Usage', types.USAGE_FIELDS, () => answer('/api/usage', 'get', 200)],
      ['UsageCounts', types.USAGE_COUNTS_FIELDS, () => props(answer('/api/usage', 'get', 200)).sites?.additionalProperties as Schema],
      ['MonitorCreateParams', types.MONITOR_CREATE_FIELDS, () => body('/api/monitors', 'post')],
      ['MonitorUpdateParams', types.MONITOR_UPDATE_FIELDS, () => body('/api/monitors/{monitorId}', 'patch')],
      ['MonitorPage', types.MONITOR_PAGE_FIELDS, () => monitorBody().pages?.items as Schema],
      ['MonitorPageCredentials', types.MONITOR_PAGE_CREDENTIALS_FIELDS, () => props(monitorBody().pages?.items).credentials as Schema],
      ['Region', types.REGION_FIELDS, () => props(monitorBody().pages?.items).ignoreRegions?.items as Schema],
      ['MonitorCompare', types.MONITOR_COMPARE_FIELDS, () => monitorBody().compare as Schema],
      ['Monitor', types.MONITOR_FIELDS, monitor],
      ['MonitorPageView', types.MONITOR_PAGE_VIEW_FIELDS, () => props(monitor()).pages?.items as Schema],
      ['MonitorRun', types.MONITOR_RUN_FIELDS, run],
      ['MonitorRunPage', types.MONITOR_RUN_PAGE_FIELDS, () => props(run()).pages?.items as Schema],
      ['MonitorJourney', types.MONITOR_JOURNEY_FIELDS, () => props(props(run()).pages?.items).journey?.oneOf?.[1] as Schema],
      ['MonitorRunPageReport', types.MONITOR_RUN_PAGE_REPORT_FIELDS, () => props(answer('/api/monitors/{monitorId}/runs/{runId}', 'get', 200)).pages?.items as Schema],
      ['MonitorPage checks', types.REPORT_CHECKS_FIELDS, () => props(monitorBody().pages?.items).checks as Schema],
      ['RunNowResult', types.RUN_NOW_FIELDS, () => answer('/api/monitors/{monitorId}/runs', 'post', 202)],
      ['AcceptBaselineParams', types.ACCEPT_BASELINE_FIELDS, () => body('/api/monitors/{monitorId}/baseline', 'post')],
    ];
  }

  function enums(): Array<[string, readonly string[], () => unknown[] | undefined]> {
    const capture = () => props(body('/api/screenshot', 'post'));
    const monitorBody = () => props(body('/api/monitors', 'post'));
    const run = () => answer('/api/monitors/{monitorId}/runs', 'get', 200).items as Schema;
    return [
      ['QUALITIES', types.QUALITIES, () => capture().quality?.enum],
      ['FORMATS', types.FORMATS, () => capture().format?.enum],
      ['PAPERS', types.PAPERS, () => props(capture().pdf).paper?.enum],
      ['MEDIA_TYPES', types.MEDIA_TYPES, () => props(capture().pdf).emulateMedia?.enum],
      ['BLOCKED_RESOURCES', types.BLOCKED_RESOURCES, () => capture().blockResources?.items?.enum],
      ['CAPTURE_STATES', types.CAPTURE_STATES, () => props(answer('/api/captures/{captureId}', 'get', 200)).status?.enum],
      ['WEBHOOK_STATES', types.WEBHOOK_STATES, () => props(props(answer('/api/captures/{captureId}', 'get', 200)).webhook).status?.enum],
      ['KEY_KINDS', types.KEY_KINDS, () => props(answer('/api/keys', 'post', 201)).kind?.enum],
      ['MANAGED_KINDS', types.MANAGED_KINDS, () => props(props(answer('/api/sites/{siteId}', 'get', 200)).managedBy).kind?.enum],
      ['BASELINE_MODES', types.BASELINE_MODES, () => props(monitorBody().compare).baseline?.enum],
      ['RUN_TRIGGERS', types.RUN_TRIGGERS, () => props(run()).trigger?.enum],
      ['PAGE_OUTCOMES', types.PAGE_OUTCOMES, () => props(props(run()).pages?.items).outcome?.enum],
    ];
  }

  describe('the types follow GET /api/openapi.json', () => {
    for (const [what, fields, schema] of objects()) {
      test(`${what}: the same properties`, () => {
        assert.deepEqual(sorted(fields), sorted(Object.keys(props(schema()))));
      });
    }
    for (const [what, values, schema] of enums()) {
      test(`${what}: the same values`, () => {
        assert.deepEqual(sorted(values), sorted((schema() ?? []) as string[]));
      });
    }
    test('every operation has a method', () => {
      const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
        path.startsWith('/api/operator/') || path === '/api/openapi.json' ? [] : Object.values(methods).map((operation) => operation.operationId as string),
      );
      assert.deepEqual(sorted(Object.keys(OPERATIONS)), sorted(operations));
    });
    test('the render link parameters beside the capture options', () => {
      const parameters = (doc.paths['/api/render']?.get as { parameters?: Array<{ name: string }> }).parameters?.map((p) => p.name);
      assert.deepEqual(sorted(parameters ?? []), ['expires', 'key', 'options', 'signature', 'url']);
    });
  });
});

// Compile-time: with the storage option the answer has no image, so a client must check it before use.
// tsc (tsconfig.test.json) fails here if `image` is ever typed as always present again.
export function imageOf(result: types.ScreenshotResult): string {
  // @ts-expect-error image is absent when the capture was written to storage (result.storage)
  const unchecked: string = result.image;
  void unchecked;
  return result.image ?? `stored at ${result.storage?.bucket}/${result.storage?.key}`;
}

