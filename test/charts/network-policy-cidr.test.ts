import { expect } from 'chai';
import { kubectl } from '../support/k8s-tools.ts';
import { exceptProblem, parseCidr } from './network-policy-cidr.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';

/**
 * The model of the API server's ipBlock check on the cases that decide it; with KUBECONFIG set, the
 * same cases go to the real API server (`kubectl apply --dry-run=server`), which must agree.
 */
const CASES: Array<{ cidr: string; except: string; problem: RegExp | undefined }> = [
  { cidr: '0.0.0.0/0', except: '10.0.0.0/8', problem: undefined },
  { cidr: '0.0.0.0/0', except: '127.0.0.0/8', problem: undefined },
  { cidr: '10.0.0.0/8', except: '10.1.2.3/16', problem: undefined },
  { cidr: '::/0', except: 'fc00::/7', problem: undefined },
  { cidr: '::/0', except: '::1/128', problem: undefined },
  // Go's Contains reads a mapped address as IPv4: inside 0.0.0.0/0 (and /96 is longer than /0)...
  { cidr: '0.0.0.0/0', except: '::ffff:0:0/96', problem: undefined },
  { cidr: '::ffff:0:0/96', except: '::ffff:10.0.0.0/104', problem: undefined },
  // ...and never inside ::/0: the renderer policy's defect.
  { cidr: '::/0', except: '::ffff:0:0/96', problem: /IPv4-mapped IPv6 counts as IPv4/ },
  { cidr: '::/0', except: '::ffff:10.0.0.0/104', problem: /IPv4-mapped IPv6 counts as IPv4/ },
  { cidr: '0.0.0.0/0', except: 'fc00::/7', problem: /not in the family/ },
  { cidr: '::/0', except: '10.0.0.0/8', problem: /not in the family/ },
  { cidr: '10.0.0.0/8', except: '11.0.0.0/16', problem: /outside/ },
  { cidr: 'fc00::/7', except: 'fe80::/10', problem: /outside/ },
  { cidr: '10.0.0.0/8', except: '10.0.0.0/8', problem: /strict subset/ },
  { cidr: '10.0.0.0/16', except: '10.0.0.0/8', problem: /strict subset/ },
  { cidr: '::ffff:0:0/96', except: '10.0.0.0/8', problem: /strict subset/ },
  { cidr: '0.0.0.0/0', except: '10.0.0.0/33', problem: /not a CIDR/ },
  { cidr: '::/0', except: 'fc00::/129', problem: /not a CIDR/ },
];

const verdict = (problem: RegExp | undefined) => (problem ? 'rejects' : 'accepts');

describe('NetworkPolicy ipBlock check (Kubernetes semantics)', () => {
  for (const { cidr, except, problem } of CASES) {
    it(`${verdict(problem)} except ${except} under cidr ${cidr}`, () => {
      const found = exceptProblem(cidr, except);
      if (problem) expect(found).to.match(problem);
      else expect(found).to.equal(undefined);
    });
  }

  it('masks the host bits as net.ParseCIDR does, and reads a mapped network as IPv4', () => {
    expect(parseCidr('10.1.2.3/8')).to.deep.include({ family: 4, value: 10n << 24n, prefix: 8 });
    expect(parseCidr('::ffff:10.0.0.0/104')).to.deep.include({ family: 4, value: 10n << 24n, prefix: 104, matchPrefix: 8 });
    expect(parseCidr('fe80::1/10')).to.deep.include({ family: 6, value: 0xfe80n << 112n, prefix: 10 });
    expect(parseCidr('10.0.0.0')).to.equal(undefined);
  });

  describe('agrees with a real API server (KUBECONFIG)', function () {
    this.timeout(120_000);
    if (skippedWithoutCluster('the model compared with a real API server')) return;
    for (const { cidr, except, problem } of CASES) {
      it(`${verdict(problem)} except ${except} under cidr ${cidr}, as the model does`, () => {
        const policy = {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'ipblock-check', namespace: 'default' },
          spec: { podSelector: {}, policyTypes: ['Egress'], egress: [{ to: [{ ipBlock: { cidr, except: [except] } }] }] },
        };
        const { status, output } = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(policy));
        if (problem) expect(output).to.match(/Invalid value|invalid CIDR/);
        else expect(status, output).to.equal(0);
      });
    }
  });
});
