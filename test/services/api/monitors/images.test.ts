import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { monitorImagesIn, openMonitorImages, type MonitorImages } from '../../../../services/api/src/monitors/images.ts';
import { forEachBlobStore, type TestBlobStore } from '../../../support/blob-stores.ts';
import { describeOnMongo, freshMongoUri } from '../../../support/store-backends.ts';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const png = Buffer.from(PNG_1X1, 'base64');

/** Where monitors keep their pictures: the blob store, whichever it is; one contract. */
forEachBlobStore('monitor pictures', function (backend) {
  let blobStore: TestBlobStore;
  let images: MonitorImages;
  beforeEach(async () => {
    blobStore = await backend.create();
    images = monitorImagesIn(blobStore.blobs);
  });
  afterEach(async () => {
    await images.close();
    await blobStore.dispose();
  });

  it('stores a picture under a fresh img_ id, as monitor-images/<id>.png, and reads back the same bytes', async () => {
    const [one, two] = [await images.put(png), await images.put(png)];
    expect(one).to.match(/^img_[0-9a-f]{24}$/);
    expect(two).to.not.equal(one);
    expect((await images.get(one))!.equals(png)).to.equal(true);
    expect(await blobStore.blobs.head(`monitor-images/${one}.png`)).to.include({ contentType: 'image/png', size: png.byteLength });
  });

  it('keeps a picture larger than one GridFS chunk whole', async () => {
    const large = Buffer.alloc(600 * 1024 + 7, 0xab);
    const id = await images.put(large);
    expect((await images.get(id))!.equals(large)).to.equal(true);
  });

  it('answers null for an unknown id and for one that is not an image id', async () => {
    expect(await images.get('img_000000000000000000000000')).to.equal(null);
    expect(await images.get('../etc/passwd')).to.equal(null);
  });

  it('deletes the pictures named, and only those', async () => {
    const [gone, kept] = [await images.put(png), await images.put(png)];
    await images.delete([gone, 'img_000000000000000000000000', '../etc/passwd']);
    expect(await images.get(gone)).to.equal(null);
    expect(await images.get(kept)).to.not.equal(null);
  });
});

describe('monitor pictures written before the blob store, under DATA_DIR/monitor-images', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-monitor-images-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('are still read, and deleted where they are, while new ones go to the blob store', async () => {
    const legacyDir = path.join(dataDir, 'monitor-images');
    mkdirSync(legacyDir);
    const old = 'img_0123456789abcdef01234567';
    writeFileSync(path.join(legacyDir, `${old}.png`), png);
    const images = await openMonitorImages({ blobs: { kind: 'directory', dir: path.join(dataDir, 'blobs') }, legacy: { backend: 'disk', dir: legacyDir } });
    try {
      expect((await images.get(old))?.equals(png)).to.equal(true);
      const fresh = await images.put(png);
      expect(existsSync(path.join(legacyDir, `${fresh}.png`)), 'nothing new is written to the old place').to.equal(false);
      await images.delete([old]);
      expect(existsSync(path.join(legacyDir, `${old}.png`))).to.equal(false);
      expect(await images.get(old)).to.equal(null);
    } finally {
      await images.close();
    }
  });
});

describeOnMongo('monitor pictures written before the blob store, in the GridFS bucket monitorImages', (uri) => {
  it('are still read, and deleted where they are', async () => {
    const database = freshMongoUri(uri, 'viewfinder_images_test');
    const { default: mongoose } = await import('mongoose');
    const connection = await mongoose.createConnection(database).asPromise();
    const bucket = new mongoose.mongo.GridFSBucket(connection.db!, { bucketName: 'monitorImages' });
    const old = 'img_0123456789abcdef01234567';
    await new Promise<void>((resolve, reject) => bucket.openUploadStream(old).once('finish', resolve).once('error', reject).end(png));
    const images = await openMonitorImages({ blobs: { kind: 'gridfs', mongodbUri: database, bucketName: 'blobs' }, legacy: { backend: 'gridfs', mongodbUri: database } });
    try {
      expect((await images.get(old))?.equals(png)).to.equal(true);
      await images.delete([old]);
      expect(await images.get(old)).to.equal(null);
      expect(await connection.db!.collection('monitorImages.files').countDocuments()).to.equal(0);
    } finally {
      await images.close();
      await connection.dropDatabase();
      await connection.close();
    }
  });
});
