import { expect } from 'chai';
import { helm, kubectl } from '../support/k8s-tools.ts';
import { CHART } from './chart.ts';
import { exceptProblem, parseCidr } from './network-policy-cidr.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';

/**
 * The model of the API server's ipBlock checks (v1.37) on the cases that decide them; with KUBECONFIG
 * set, the same cases go to the real API server (`kubectl apply --dry-run=server`), which must agree,
 * refusing each for the reason `server` names; the chart's own check (helm template) must agree too.
 */
const SUBSET = /must be a strict subset of `cidr`/;
const CASES: Array<{ cidr: string; except: string; problem: RegExp | undefined; server?: RegExp }> = [
  { cidr: '0.0.0.0/0', except: '10.0.0.0/8', problem: undefined },
  { cidr: '0.0.0.0/0', except: '127.0.0.0/8', problem: undefined },
  { cidr: '10.0.0.0/8', except: '10.1.0.0/16', problem: undefined },
  { cidr: '::/0', except: 'fc00::/7', problem: undefined },
  { cidr: '::/0', except: '::1/128', problem: undefined },
  { cidr: '2001:db8::/32', except: '2001:db8:1::/48', problem: undefined },
  // Strict validation (v1.36+): no bits beyond the prefix, in the cidr or an except...
  { cidr: '10.0.0.0/8', except: '10.1.2.3/16', problem: /10\.1\.2\.3\/16 has bits set beyond its \/16 prefix, which Kubernetes 1\.36 and later refuse \(write 10\.1\.0\.0\/16\)/, server: /must not have bits set beyond the prefix length/ },
  { cidr: '10.1.2.3/8', except: '10.2.0.0/16', problem: /has bits set beyond its \/8 prefix/, server: /must not have bits set beyond the prefix length/ },
  { cidr: '::/0', except: 'fc00::1/7', problem: /has bits set beyond its \/7 prefix/, server: /must not have bits set beyond the prefix length/ },
  // ...no IPv4-mapped IPv6, wherever it is (before, ::/0 refused it as another family, 0.0.0.0/0 took it)...
  { cidr: '0.0.0.0/0', except: '::ffff:0:0/96', problem: /IPv4-mapped IPv6/, server: /must not have an IPv4-mapped IPv6 address/ },
  { cidr: '::/0', except: '::ffff:0:0/96', problem: /IPv4-mapped IPv6/, server: /must not have an IPv4-mapped IPv6 address/ },
  { cidr: '::/0', except: '::ffff:10.0.0.0/104', problem: /IPv4-mapped IPv6/, server: /must not have an IPv4-mapped IPv6 address/ },
  { cidr: '::ffff:0:0/96', except: '::ffff:10.0.0.0/104', problem: /IPv4-mapped IPv6/, server: /must not have an IPv4-mapped IPv6 address/ },
  { cidr: '::ffff:0:0/96', except: '10.0.0.0/8', problem: /IPv4-mapped IPv6/, server: /must not have an IPv4-mapped IPv6 address/ },
  // ...and no leading zeros.
  { cidr: '0.0.0.0/0', except: '010.0.0.0/8', problem: /leading zeros/, server: /must not have leading 0s/ },
  { cidr: '0.0.0.0/0', except: '10.0.0.0/08', problem: /leading zeros/, server: /must not have leading 0s/ },
  { cidr: '::/0', except: 'fc00::/07', problem: /leading zeros/, server: /must not have leading 0s/ },
  // A strict subset of the cidr, in its family.
  { cidr: '0.0.0.0/0', except: 'fc00::/7', problem: /not in the family/, server: SUBSET },
  { cidr: '::/0', except: '10.0.0.0/8', problem: /not in the family/, server: SUBSET },
  { cidr: '10.0.0.0/8', except: '11.0.0.0/16', problem: /outside/, server: SUBSET },
  { cidr: 'fc00::/7', except: 'fe80::/10', problem: /outside/, server: SUBSET },
  { cidr: '10.0.0.0/8', except: '10.0.0.0/8', problem: /strict subset/, server: SUBSET },
  { cidr: '10.0.0.0/16', except: '10.0.0.0/8', problem: /strict subset/, server: SUBSET },
  { cidr: '0.0.0.0/0', except: '10.0.0.0/33', problem: /not a CIDR/, server: /must be a valid CIDR value/ },
  { cidr: '::/0', except: 'fc00::/129', problem: /not a CIDR/, server: /must be a valid CIDR value/ },
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

  it('masks the host bits as net.ParseCIDR does, saying it had to, and knows a mapped address', () => {
    expect(parseCidr('10.1.2.3/8')).to.deep.equal({ family: 4, value: 10n << 24n, prefix: 8, hostBits: true, mapped: false });
    expect(parseCidr('10.0.0.0/8')).to.deep.include({ hostBits: false });
    expect(parseCidr('::ffff:10.0.0.0/104')).to.deep.include({ family: 6, prefix: 104, mapped: true, hostBits: false });
    expect(parseCidr('fe80::1/10')).to.deep.include({ family: 6, value: 0xfe80n << 112n, prefix: 10, hostBits: true });
    expect(parseCidr('10.0.0.0')).to.equal(undefined);
  });

  describe("agrees with the chart's own check of the values (helm template)", function () {
    this.timeout(120_000);
    for (const { cidr, except, problem } of CASES) {
      it(`${verdict(problem)} except ${except} under cidr ${cidr} in operator.networkPolicy.kubernetesApiTo, as the model does`, () => {
        const peers = JSON.stringify([{ ipBlock: { cidr, except: [except] } }]);
        const { status, output } = helm(['template', 'vf', CHART, '--show-only', 'templates/operator-networkpolicy.yaml', '--set-json', `operator.networkPolicy.kubernetesApiTo=${peers}`]);
        if (problem) {
          expect(status, output).to.not.equal(0);
          expect(output).to.include('operator.networkPolicy.kubernetesApiTo[0].ipBlock: ');
          expect(output).to.match(problem);
        } else expect(status, output).to.equal(0);
      });
    }

    it('refuses blockedCidrs and blockedCidrsIPv6 that Kubernetes 1.37 refuses, saying which value and what to write', () => {
      const refusal = (set: string) => helm(['template', 'vf', CHART, '--set', set]);
      const hostBits = refusal('renderer.networkPolicy.blockedCidrs={10.0.0.0/8,10.1.2.3/16}');
      expect(hostBits.status).to.not.equal(0);
      expect(hostBits.output).to.include('renderer.networkPolicy.blockedCidrs (excepted from 0.0.0.0/0): except 10.1.2.3/16 has bits set beyond its /16 prefix, which Kubernetes 1.36 and later refuse (write 10.1.0.0/16)');
      const mapped = refusal('renderer.networkPolicy.blockedCidrsIPv6={fc00::/7,::ffff:0:0/96}');
      expect(mapped.status).to.not.equal(0);
      expect(mapped.output).to.include('renderer.networkPolicy.blockedCidrsIPv6 (excepted from ::/0): except ::ffff:0:0/96 is an IPv4-mapped IPv6 CIDR');
      const ipv4 = refusal('renderer.networkPolicy.blockedCidrsIPv6={10.0.0.0/8}');
      expect(ipv4.output).to.include('except 10.0.0.0/8 is IPv4, not in the family of cidr ::/0');
    });
  });

  describe('agrees with a real API server (KUBECONFIG)', function () {
    this.timeout(120_000);
    if (skippedWithoutCluster('the model compared with a real API server')) return;
    for (const { cidr, except, problem, server } of CASES) {
      it(`${verdict(problem)} except ${except} under cidr ${cidr}, as the model does`, () => {
        const policy = {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'ipblock-check', namespace: 'default' },
          spec: { podSelector: {}, policyTypes: ['Egress'], egress: [{ to: [{ ipBlock: { cidr, except: [except] } }] }] },
        };
        const { status, output } = kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(policy));
        if (problem) {
          expect(status, output).to.not.equal(0);
          expect(output).to.match(server as RegExp);
        } else expect(status, output).to.equal(0);
      });
    }
  });
});
