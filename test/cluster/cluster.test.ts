/**
 * The project's own test cluster (test/cluster/), as `make test` starts it: the version it serves,
 * the Pod Security it enforces, and on a node, the node's self-test and its one-node-per-machine rule.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { skippedWithoutCluster } from '../support/cluster.ts';
import { KUBECTL, kubectl } from '../support/k8s-tools.ts';
import { testNamespaceName } from '../support/namespaces.ts';
import { realNode } from '../node/cluster.ts';

const NODE_SCRIPTS = fileURLToPath(new URL('./node/', import.meta.url));

const pod = (namespace: string, securityContext: object, containerSecurityContext: object): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'probe', namespace },
    spec: { securityContext, containers: [{ name: 'c', image: 'localhost/k8s-local/busybox:1', securityContext: containerSecurityContext }] },
  });

describe('the test cluster', function () {
  this.timeout(180_000);
  if (skippedWithoutCluster('the test cluster’s version and Pod Security')) return;

  it('serves Kubernetes v1.37, and the tests’ kubectl is of the same build', function () {
    const version = kubectl(['version', '-o', 'json']);
    expect(version.status, version.output).to.equal(0);
    const { clientVersion, serverVersion } = JSON.parse(version.stdout) as { clientVersion: { gitVersion: string }; serverVersion: { gitVersion: string; minor: string } };
    console.log(`      server ${serverVersion.gitVersion}, kubectl ${clientVersion.gitVersion} (${KUBECTL})`);
    expect(serverVersion.gitVersion).to.match(/^v1\.37\.\d+$/);
    expect(serverVersion.minor).to.equal('37');
    expect(clientVersion.gitVersion).to.equal(serverVersion.gitVersion);
  });

  it('enforces Pod Security "restricted" in a new namespace: a root pod is refused, a restricted one admitted', function () {
    const namespace = testNamespaceName('-psa');
    expect(kubectl(['create', 'namespace', namespace]).status).to.equal(0);
    try {
      const refused = kubectl(['apply', '--dry-run=server', '-f', '-'], pod(namespace, {}, {}));
      expect(refused.status, refused.output).to.not.equal(0);
      expect(refused.output).to.include('violates PodSecurity "restricted:latest"');
      const admitted = kubectl(
        ['apply', '--dry-run=server', '-f', '-'],
        pod(namespace, { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } }, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }),
      );
      expect(admitted.status, admitted.output).to.equal(0);
    } finally {
      kubectl(['delete', 'namespace', namespace, '--wait=false']);
    }
  });

  describe('a node', function () {
    const node = realNode();
    if ('skip' in node) {
      it(`is skipped: ${node.skip}`, function () {
        this.skip();
      });
      return;
    }

    it('passes its self-test: Deployment, Service from host and pods, DNS, the API from a pod, EndpointSlices, a replaced pod, exec, port-forward', function () {
      const run = spawnSync(`${NODE_SCRIPTS}selftest.sh`, [node.stateDir], { encoding: 'utf8' });
      console.log(run.stdout.replace(/^/gm, '      '));
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stdout).to.not.include('FAIL');
      expect(run.stdout.match(/^PASS/gm)?.length ?? 0).to.be.at.least(10);
    });

    it('refuses a second node on the same machine, naming the one that runs', function () {
      const second = `/tmp/vf-second-${process.pid}`;
      try {
        const run = spawnSync(`${NODE_SCRIPTS}up.sh`, [second], { encoding: 'utf8' });
        expect(run.status).to.not.equal(0);
        expect(run.stderr).to.include(`another node runs on this machine, from STATE_DIR ${node.stateDir}`);
        expect(run.stderr).to.include(`down.sh ${node.stateDir}`);
      } finally {
        rmSync(second, { recursive: true, force: true });
      }
    });
  });
});
