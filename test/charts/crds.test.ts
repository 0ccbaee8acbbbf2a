import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { CHART, REPO, readYaml } from './chart.ts';

const REPO_CRDS = `${REPO}crds/`;
const CHART_CRDS = `${CHART}crds/`;

const yamlFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.yaml')).sort();

describe('chart CRDs (charts/viewfinder/crds)', () => {
  it('are byte-identical copies of the repo\'s crds/*.yaml (run `make sync-crds` after changing those)', () => {
    // Not a skip: a chart whose CRDs cannot be checked against the operator's must not pass.
    expect(existsSync(REPO_CRDS), `the repo's CRDs are missing: ${REPO_CRDS} does not exist (the operator, issue 7, provides it)`).to.equal(true);
    expect(yamlFiles(CHART_CRDS), 'the same files').to.deep.equal(yamlFiles(REPO_CRDS));
    for (const name of yamlFiles(REPO_CRDS)) {
      expect(readFileSync(`${CHART_CRDS}${name}`, 'utf8'), `charts/viewfinder/crds/${name} differs from crds/${name}: run make sync-crds`).to.equal(readFileSync(`${REPO_CRDS}${name}`, 'utf8'));
    }
  });

  it('define Site, ApiKey and PageMonitor in group viewfinder.dev, version v1alpha1', () => {
    const crds = yamlFiles(CHART_CRDS).map((name) => readYaml(`${CHART_CRDS}${name}`) as { spec: { group: string; names: { kind: string }; versions: { name: string }[] } });
    expect(crds.map((crd) => crd.spec.names.kind).sort()).to.deep.equal(['ApiKey', 'PageMonitor', 'Site']);
    for (const crd of crds) {
      expect(crd.spec.group).to.equal('viewfinder.dev');
      expect(crd.spec.versions.map((version) => version.name)).to.deep.equal(['v1alpha1']);
    }
  });
});
