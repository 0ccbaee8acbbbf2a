import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { helm } from '../support/k8s-tools.ts';
import { CHART, ciValueFiles, REPO } from './chart.ts';

/**
 * What `helm uninstall` leaves is what carries `helm.sh/resource-policy: keep`: docs/install-kubernetes.md
 * names each such resource in "What `helm uninstall` leaves", with the release and namespace its
 * examples use, for the default values and every ci/ values file, so the page cannot drift from
 * the chart again (issue 44: the signing secrets' key was kept and not named).
 */

const RELEASE = 'viewfinder';
const NAMESPACE = 'viewfinder';

type Manifest = { kind: string; metadata: { name: string; annotations?: Record<string, string> } };

function kept(valueFile?: string): Manifest[] {
  const { status, output, stdout } = helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...(valueFile ? ['-f', valueFile] : [])]);
  expect(status, output).to.equal(0);
  return parseAllDocuments(stdout)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest?.metadata?.annotations?.['helm.sh/resource-policy'] === 'keep');
}

function uninstallSection(): string {
  const page = readFileSync(`${REPO}docs/install-kubernetes.md`, 'utf8');
  const start = page.indexOf('**What `helm uninstall` leaves.**');
  expect(start, 'the paragraph "What `helm uninstall` leaves"').to.be.greaterThan(-1);
  // The section runs to the next bold-headed paragraph or heading.
  const end = page.slice(start + 1).search(/\n(\*\*[A-Z]|#)/);
  return page.slice(start, end === -1 ? undefined : start + 1 + end);
}

describe('docs/install-kubernetes.md names everything `helm uninstall` leaves', () => {
  for (const valueFile of [undefined, ...ciValueFiles()]) {
    it(`${valueFile ? valueFile.slice(CHART.length) : 'values.yaml'}: every resource with helm.sh/resource-policy: keep`, () => {
      const section = uninstallSection();
      const unnamed = kept(valueFile)
        .filter((manifest) => !section.includes(`\`${manifest.metadata.name}\``))
        .map((manifest) => `${manifest.kind} ${manifest.metadata.name}`);
      expect(unnamed).to.deep.equal([]);
    });
  }

  it('finds the kept resources it checks (the hosted ones among them)', () => {
    const names = ciValueFiles().flatMap((file) => kept(file).map((manifest) => manifest.metadata.name));
    expect(names).to.include.members(['viewfinder-mongodb', 'viewfinder-signing-secrets-key']);
  });
});
