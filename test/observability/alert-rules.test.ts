import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exposedSampleNames, viewfinderNamesIn } from '../support/metric-names.ts';
import { promtool } from './promtool.ts';

const FILES = fileURLToPath(new URL('../../charts/viewfinder/files/', import.meta.url));
const RULES = `${FILES}prometheus-rules.yaml`;
const RULE_TESTS = `${FILES}prometheus-rules.test.yaml`;

const REQUIRED_ALERTS = ['ViewfinderHighErrorRatio', 'ViewfinderRenderQueueSaturated', 'ViewfinderCaptureLatencyHigh', 'ViewfinderRendererDown'];
/** Page monitors (issue 23): a page changed beyond its threshold, failing runs, no run for twice the interval. */
const MONITOR_ALERTS = ['ViewfinderMonitorPageChanged', 'ViewfinderMonitorFailing', 'ViewfinderMonitorNotRunning'];
/** Checks (issue 40): a page failing its checks, a Web Vital over its bound for 3 runs. */
const CHECK_ALERTS = ['ViewfinderMonitorPageChecksFailing', 'ViewfinderMonitorWebVitalOverBound'];

/** `- alert: Name` and `expr:` blocks, read from the YAML text (the repo has no YAML parser). */
function alertNames(yaml: string): string[] {
  return [...yaml.matchAll(/^\s*- alert: (\S+)$/gm)].map((match) => match[1] as string);
}

describe('alerting rules (charts/viewfinder/files/prometheus-rules.yaml)', () => {
  it('pass `promtool check rules`', () => {
    const { status, output } = promtool(['check', 'rules', RULES]);
    expect(status, output).to.equal(0);
    expect(output).to.match(/SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests: `promtool test rules prometheus-rules.test.yaml`', () => {
    const { status, output } = promtool(['test', 'rules', RULE_TESTS], FILES);
    expect(status, output).to.equal(0);
    expect(output).to.include('SUCCESS');
  });

  it('alert on a high error ratio, a saturated queue, a high p95 latency and a renderer down', () => {
    expect(alertNames(readFileSync(RULES, 'utf8'))).to.include.members(REQUIRED_ALERTS);
  });

  it('alert on a monitored page that changed, a monitor failing its runs and a monitor that stopped running', () => {
    expect(alertNames(readFileSync(RULES, 'utf8'))).to.include.members(MONITOR_ALERTS);
  });

  it("alert on a page failing its checks and a Web Vital over its page's bound", () => {
    expect(alertNames(readFileSync(RULES, 'utf8'))).to.include.members(CHECK_ALERTS);
  });

  it('have a unit test that shows each alert firing', () => {
    const tests = readFileSync(RULE_TESTS, 'utf8');
    for (const alert of alertNames(readFileSync(RULES, 'utf8'))) {
      const firing = new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`);
      expect(tests, alert).to.match(firing);
    }
  });

  it('read only metrics that the services register', async () => {
    const exposed = await exposedSampleNames();
    const used = viewfinderNamesIn(readFileSync(RULES, 'utf8'));
    expect(used).to.not.be.empty;
    for (const name of used) expect(exposed.has(name), `${name} is not registered by either service`).to.equal(true);
  });
});
