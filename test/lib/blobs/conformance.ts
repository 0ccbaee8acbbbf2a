import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { BlobTooLarge, readAll, type BlobStore } from '../../../lib/blobs/blob-store.ts';
import type { BlobStoreBackend, TestBlobStore } from '../../support/blob-stores.ts';

/**
 * The blob store port's conformance suite: the directory, GridFS and S3 implementations each run
 * exactly these cases (one test file per implementation), so that the result cache, asynchronous
 * results and monitor pictures behave the same on any of them.
 *
 * Each case has a store over an empty namespace of its own (a directory, a database, a bucket).
 */
export function blobStoreConformance(backend: BlobStoreBackend): void {
  let opened: TestBlobStore;
  let store: BlobStore;
  beforeEach(async () => {
    opened = await backend.create();
    store = opened.blobs;
  });
  afterEach(() => opened.dispose());

  const keysUnder = async (prefix: string) => {
    const keys: string[] = [];
    for await (const listing of store.list(prefix)) keys.push(listing.key);
    return keys;
  };
  const refusal = async (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err,
    );
  /** A stream of `chunks` chunks of `size` bytes each, as a renderer's or an upload's body arrives. */
  const streamOf = (chunks: Buffer[]) => Readable.from(chunks);

  it('round-trips bytes, content type and metadata, read whole or streamed', async () => {
    const bytes = Buffer.from('a picture, or close enough');
    const put = await store.put('round/trip.png', bytes, { contentType: 'image/png', metadata: { width: '1280', 'captured-at': '2026-11-28T19:00:00Z' } });
    expect(put).to.include({ key: 'round/trip.png', size: bytes.byteLength, contentType: 'image/png' });

    const whole = await store.getBuffer('round/trip.png');
    expect(whole?.bytes.equals(bytes)).to.equal(true);
    expect(whole?.info).to.include({ key: 'round/trip.png', size: bytes.byteLength, contentType: 'image/png' });
    expect(whole?.info.metadata).to.deep.equal({ width: '1280', 'captured-at': '2026-11-28T19:00:00Z' });
    expect(whole?.info.lastModified).to.be.instanceOf(Date);

    const streamed = await store.get('round/trip.png');
    expect((await readAll(streamed!.body)).equals(bytes)).to.equal(true);
    expect(await store.head('round/trip.png')).to.deep.equal(whole?.info);
  });

  it('defaults the content type to application/octet-stream and the metadata to none', async () => {
    await store.put('plain', Buffer.from('x'));
    expect(await store.head('plain')).to.include({ contentType: 'application/octet-stream', size: 1 });
    expect((await store.head('plain'))?.metadata).to.deep.equal({});
  });

  it('stores a body that arrives as a stream, chunk by chunk', async () => {
    const chunks = Array.from({ length: 40 }, () => randomBytes(64 * 1024));
    await store.put('streamed', streamOf(chunks), { contentType: 'image/jpeg' });
    const back = await store.getBuffer('streamed');
    expect(back?.bytes.equals(Buffer.concat(chunks))).to.equal(true);
    expect(back?.info.size).to.equal(40 * 64 * 1024);
  });

  it('keeps binary content intact: every byte value, and an empty blob', async () => {
    const everyByte = Buffer.from(Array.from({ length: 4096 }, (_, index) => index % 256));
    await store.put('binary', everyByte);
    expect((await store.getBuffer('binary'))?.bytes.equals(everyByte)).to.equal(true);
    await store.put('empty', Buffer.alloc(0));
    const empty = await store.getBuffer('empty');
    expect(empty?.bytes.byteLength).to.equal(0);
    expect(empty?.info.size).to.equal(0);
  });

  it('overwrites a key: the new bytes, content type and metadata replace the old whole', async () => {
    await store.put('over', Buffer.from('the first, longer value'), { contentType: 'image/png', metadata: { version: '1' } });
    await store.put('over', Buffer.from('second'), { contentType: 'image/webp', metadata: { other: 'x' } });
    const back = await store.getBuffer('over');
    expect(back?.bytes.toString()).to.equal('second');
    expect(back?.info).to.include({ contentType: 'image/webp', size: 6 });
    expect(back?.info.metadata).to.deep.equal({ other: 'x' });
  });

  it('answers undefined for a key that holds nothing, by every read', async () => {
    expect(await store.get('absent/key')).to.equal(undefined);
    expect(await store.getBuffer('absent/key')).to.equal(undefined);
    expect(await store.head('absent/key')).to.equal(undefined);
  });

  it('deletes a blob, and deleting again (or a key never written) is not an error', async () => {
    await store.put('gone/soon', Buffer.from('x'));
    await store.delete('gone/soon');
    expect(await store.head('gone/soon')).to.equal(undefined);
    await store.delete('gone/soon');
    await store.delete('never/written');
    expect(await keysUnder('gone/')).to.deep.equal([]);
  });

  it('refuses a body past the size bound and writes nothing: a new key stays absent, an old value stays whole', async () => {
    const tooLarge = await refusal(store.put('bounded/new', Buffer.alloc(1025), { maxBytes: 1024 }));
    expect(tooLarge).to.be.instanceOf(BlobTooLarge);
    expect(await store.head('bounded/new')).to.equal(undefined);

    await store.put('bounded/old', Buffer.from('the value before'));
    const streamed = await refusal(store.put('bounded/old', streamOf(Array.from({ length: 8 }, () => Buffer.alloc(512, 1))), { maxBytes: 1024 }));
    expect(streamed).to.be.instanceOf(BlobTooLarge);
    expect((await store.getBuffer('bounded/old'))?.bytes.toString()).to.equal('the value before');
    expect(await keysUnder('bounded/')).to.deep.equal(['bounded/old']);

    // Exactly the bound is allowed.
    await store.put('bounded/exact', Buffer.alloc(1024, 7), { maxBytes: 1024 });
    expect((await store.head('bounded/exact'))?.size).to.equal(1024);
  });

  it('leaves one whole value when puts of one key race, and readers meanwhile see whole values only', async () => {
    const values = Array.from({ length: 6 }, (_, index) => Buffer.alloc(200_000 + index * 1000, index + 1));
    const digests = new Set(values.map((value) => createHash('sha256').update(value).digest('hex')));
    await store.put('raced', values[0]!);
    const reads: Promise<Buffer | undefined>[] = [];
    await Promise.all(
      values.map(async (value, index) => {
        await store.put('raced', index % 2 ? streamOf([value.subarray(0, 1000), value.subarray(1000)]) : value);
        reads.push(store.getBuffer('raced').then((blob) => blob?.bytes));
      }),
    );
    for (const read of await Promise.all(reads)) {
      expect(read, 'a read during the race found the key empty').to.not.equal(undefined);
      expect(digests.has(createHash('sha256').update(read!).digest('hex')), 'a read during the race saw a partial or mixed value').to.equal(true);
    }
    const final = await store.getBuffer('raced');
    expect(digests.has(createHash('sha256').update(final!.bytes).digest('hex'))).to.equal(true);
    expect(final?.info.size).to.equal(final?.bytes.byteLength);
    expect(await keysUnder('raced')).to.deep.equal(['raced']);
  });

  it('takes keys with slashes and lists them by prefix, in key order', async () => {
    for (const key of ['captures/job_2', 'captures/job_1', 'captures/job_10/page', 'captures-old/job_9', 'monitors/img_1', 'capture']) {
      await store.put(key, Buffer.from(key));
    }
    expect(await keysUnder('captures/')).to.deep.equal(['captures/job_1', 'captures/job_10/page', 'captures/job_2']);
    expect(await keysUnder('captures/job_1')).to.deep.equal(['captures/job_1', 'captures/job_10/page']);
    expect(await keysUnder('capture')).to.deep.equal(['capture', 'captures-old/job_9', 'captures/job_1', 'captures/job_10/page', 'captures/job_2']);
    expect(await keysUnder('nothing/')).to.deep.equal([]);
    expect((await store.getBuffer('captures/job_10/page'))?.bytes.toString()).to.equal('captures/job_10/page');
    const listed = [];
    for await (const entry of store.list('monitors/')) listed.push(entry);
    expect(listed).to.have.length(1);
    expect(listed[0]).to.include({ key: 'monitors/img_1', size: 'monitors/img_1'.length });
    expect(listed[0]?.lastModified).to.be.instanceOf(Date);
  });

  it('refuses keys that are not relative paths of safe characters, before any I/O', async () => {
    for (const key of ['', '/leading', 'trailing/', 'a//b', '../up', 'a/../b', '.hidden', 'spa ce', 'new\nline', 'x'.repeat(513)]) {
      const err = await refusal(store.put(key, Buffer.from('x')));
      expect(err, JSON.stringify(key)).to.be.instanceOf(TypeError);
    }
  });
}
