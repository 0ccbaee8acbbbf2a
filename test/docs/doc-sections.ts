import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A section of a doc under docs/, from one heading to the next one named, and its fenced code blocks. */
export function docSection(file: string, from: string, to: string): { text: string; blocks: Array<{ lang: string; code: string }> } {
  const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', file), 'utf8');
  const text = doc.slice(doc.indexOf(from), doc.indexOf(to));
  const blocks = [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({ lang: lang as string, code: code as string }));
  return { text, blocks };
}

/** Runs a doc's shell block with bash, as a reader pastes it, with `env` added. */
export function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
