import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { openMonitorImages, type MonitorImages } from '../../../../services/api/src/monitors/images.ts';
import { describeOnMongo, freshMongoUri } from '../../../support/store-backends.ts';

/** Where monitors keep their pictures: files under DATA_DIR with the embedded store, GridFS with MongoDB; one contract. */
function monitorImagesConformance(open: () => Promise<{ images: MonitorImages; dispose(): Promise<void> }>): void {
  let images: MonitorImages;
  let dispose: () => Promise<void>;
  beforeEach(async () => ({ images, dispose } = await open()));
  afterEach(() => dispose());

  it('stores a picture under a fresh img_ id and reads back the same bytes', async () => {
    const png = Buffer.from(PNG_1X1, 'base64');
    const [one, two] = [await images.put(png), await images.put(png)];
    expect(one).to.match(/^img_[0-9a-f]{24}$/);
    expect(two).to.not.equal(one);
    expect((await images.get(one))!.equals(png)).to.equal(true);
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
    const png = Buffer.from(PNG_1X1, 'base64');
    const [gone, kept] = [await images.put(png), await images.put(png)];
    await images.delete([gone, 'img_000000000000000000000000']);
    expect(await images.get(gone)).to.equal(null);
    expect(await images.get(kept)).to.not.equal(null);
  });
}

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('monitor pictures on disk (the embedded store)', () => {
  monitorImagesConformance(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-monitor-images-'));
    const images = await openMonitorImages({ backend: 'disk', dir });
    return { images, dispose: async () => (await images.close(), rmSync(dir, { recursive: true, force: true })) };
  });
});

describeOnMongo('monitor pictures in MongoDB GridFS', (uri) => {
  monitorImagesConformance(async () => {
    const database = freshMongoUri(uri, 'viewfinder_images_test');
    const images = await openMonitorImages({ backend: 'gridfs', mongodbUri: database });
    const { default: mongoose } = await import('mongoose');
    return {
      images,
      async dispose() {
        await images.close();
        const connection = await mongoose.createConnection(database).asPromise();
        await connection.dropDatabase();
        await connection.close();
      },
    };
  });
});
