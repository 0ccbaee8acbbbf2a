import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { openDirectoryBlobStore } from '../../../lib/blobs/directory-blob-store.ts';
import { directoryBlobs } from '../../support/blob-stores.ts';
import { blobStoreConformance } from './conformance.ts';

describe('blob store: a local directory', () => {
  blobStoreConformance(directoryBlobs);

  it('leaves no temporary file behind a refused put, and removes emptied directories with their last blob', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-blobs-'));
    try {
      const store = await openDirectoryBlobStore({ dir });
      await store.put('a/b/c', Buffer.from('x'));
      await store.put('a/b/too-large', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 }).catch(() => undefined);
      expect(readdirSync(path.join(dir, '.tmp'))).to.deep.equal([]);
      await store.delete('a/b/c');
      expect(readdirSync(dir)).to.deep.equal(['.tmp']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
