import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Ajv, type AnySchema, type ErrorObject } from 'ajv';
import { CHART, ciValueFiles, defaultValues, mergeValues, readYaml, type Values } from './chart.ts';

const schema = JSON.parse(readFileSync(`${CHART}values.schema.json`, 'utf8')) as AnySchema & Record<string, unknown>;
// Draft-07, which every Helm 3 and 4 release validates values.schema.json with.
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);

function errorsOf(values: Values): string {
  validate(values);
  return (validate.errors ?? []).map((error: ErrorObject) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`).join('\n');
}

/** Every object node of the schema, with its JSON pointer. */
function objectNodes(node: unknown, pointer = '#'): { pointer: string; node: Record<string, unknown> }[] {
  if (typeof node !== 'object' || node === null) return [];
  if (Array.isArray(node)) return node.flatMap((item, index) => objectNodes(item, `${pointer}/${index}`));
  const record = node as Record<string, unknown>;
  const own = record.type === 'object' ? [{ pointer, node: record }] : [];
  return [...own, ...Object.entries(record).flatMap(([key, value]) => objectNodes(value, `${pointer}/${key}`))];
}

describe('chart values.schema.json', () => {
  it('accepts values.yaml', () => {
    expect(errorsOf(defaultValues())).to.equal('');
  });

  for (const file of ciValueFiles()) {
    it(`accepts ci/${basename(file)} merged over values.yaml, as Helm merges it`, () => {
      expect(errorsOf(mergeValues(defaultValues(), readYaml(file) as Values))).to.equal('');
    });
  }

  it('rejects a misspelt key (renderer.replicaCount) and names it', () => {
    const values = mergeValues(defaultValues(), { renderer: { replicaCount: 3 } });
    expect(errorsOf(values)).to.match(/^\/renderer must NOT have additional properties \{"additionalProperty":"replicaCount"\}/m);
  });

  it('rejects a misspelt key at the top level (ingres)', () => {
    expect(errorsOf(mergeValues(defaultValues(), { ingres: { enabled: true } }))).to.include('"additionalProperty":"ingres"');
  });

  it('rejects a value of the wrong kind (api.mode: hosed)', () => {
    expect(errorsOf(mergeValues(defaultValues(), { api: { mode: 'hosed' } }))).to.match(/^\/api\/mode must be equal to one of the allowed values/m);
  });

  it('accepts api.trustProxy auto, true and false, and rejects anything else', () => {
    for (const trustProxy of ['auto', true, false]) expect(errorsOf(mergeValues(defaultValues(), { api: { trustProxy } }))).to.equal('');
    expect(errorsOf(mergeValues(defaultValues(), { api: { trustProxy: 'yes' } }))).to.match(/^\/api\/trustProxy must be equal to one of the allowed values/m);
  });

  it('rejects a result cache bound that is not a positive whole number of MiB (api.resultCache.maxMb)', () => {
    expect(errorsOf(mergeValues(defaultValues(), { api: { resultCache: { maxMb: 0 } } }))).to.match(/^\/api\/resultCache\/maxMb must be >= 1/m);
    expect(errorsOf(mergeValues(defaultValues(), { api: { resultCache: { maxMb: '1Gi' } } }))).to.match(/^\/api\/resultCache\/maxMb must be integer/m);
    expect(errorsOf(mergeValues(defaultValues(), { api: { resultCache: { sizeMb: 10 } } }))).to.include('"additionalProperty":"sizeMb"');
  });

  it('checks the API NetworkPolicy peers like the renderer\'s (api.networkPolicy)', () => {
    expect(errorsOf(mergeValues(defaultValues(), { api: { networkPolicy: { clientsFrom: [{ podSelector: { matchLabels: { app: 'shop' } } }] } } }))).to.equal('');
    expect(errorsOf(mergeValues(defaultValues(), { api: { networkPolicy: { ingressControllerFrom: 'ingress-nginx' } } }))).to.match(/^\/api\/networkPolicy\/ingressControllerFrom must be array/m);
  });

  it('allows store=embedded only with one API replica (api.replicas empty or 1), and any number on MongoDB', () => {
    const withStore = (store: string, replicas: number | null) => errorsOf(mergeValues(defaultValues(), { store, api: { replicas } }));
    expect(withStore('embedded', null)).to.equal('');
    expect(withStore('embedded', 1)).to.equal('');
    expect(withStore('embedded', 2)).to.match(/^\/api\/replicas must be <= 1/m);
    expect(withStore('mongodb', 5)).to.equal('');
    expect(errorsOf(mergeValues(defaultValues(), { store: 'sqlite' }))).to.match(/^\/store must be equal to one of the allowed values/m);
  });

  it('closes every object: additionalProperties is false, or a typed schema for maps (labels, env)', () => {
    const open = objectNodes(schema)
      .filter(({ node }) => node.additionalProperties === undefined || node.additionalProperties === true)
      // Kubernetes types passed through as they are (affinity terms), checked by the API server.
      .filter(({ node }) => !String(node.$comment ?? '').startsWith('passthrough'))
      // The top-level allOf conditions (if/then) only narrow values that the closed schema above describes.
      .filter(({ pointer }) => !pointer.startsWith('#/allOf/'))
      .map(({ pointer }) => pointer);
    expect(open).to.deep.equal([]);
  });
});

describe('chart values.yaml', () => {
  it('documents every key with a comment on the line above or at the end of its line', () => {
    const lines = readFileSync(`${CHART}values.yaml`, 'utf8').split('\n');
    const undocumented = lines
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => /^\s*[A-Za-z0-9_.-]+:/.test(line))
      .filter(({ line, index }) => !line.includes(' # ') && !/^\s*#/.test(lines[index - 1] ?? ''))
      .map(({ line, index }) => `${index + 1}: ${line.trim()}`);
    expect(undocumented).to.deep.equal([]);
  });
});
