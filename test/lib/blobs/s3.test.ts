import { expect } from 'chai';
import { openS3BlobStore, S3Error, type S3BlobStoreOptions } from '../../../lib/blobs/s3-blob-store.ts';
import { EMPTY_PAYLOAD_HASH, presignUrl, signRequest } from '../../../lib/blobs/sigv4.ts';
import { s3Blobs } from '../../support/blob-stores.ts';
import { describeOnS3, freshBucket } from '../../support/object-store.ts';
import { blobStoreConformance } from './conformance.ts';

describe('SigV4 signer', () => {
  it("reproduces AWS's published example (GET Object with a Range header, us-east-1)", () => {
    // From the S3 API reference, "Signature Calculations for the Authorization Header", GET Object.
    const headers = signRequest({
      method: 'GET',
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      headers: { Range: 'bytes=0-9' },
      payloadHash: EMPTY_PAYLOAD_HASH,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      now: new Date('2013-05-24T00:00:00Z'),
    });
    expect(headers.authorization).to.equal(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });
});

describe('SigV4 presigned URLs (query parameters)', () => {
  const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };

  it("reproduces AWS's published example (GET Object, 86400 seconds, us-east-1), with the secret nowhere in the URL", () => {
    // From the S3 API reference, "Authenticating Requests: Using Query Parameters".
    const url = presignUrl({ method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), region: 'us-east-1', credentials, expiresSeconds: 86_400, now: new Date('2013-05-24T00:00:00Z') });
    expect(url.searchParams.get('X-Amz-Signature')).to.equal('aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404');
    expect(url.searchParams.get('X-Amz-Credential')).to.equal('AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request');
    expect(url.href).to.not.include(credentials.secretAccessKey).and.not.include(encodeURIComponent(credentials.secretAccessKey));
  });

  it('refuses an expiry beyond the 7 days S3 allows, or below a second', () => {
    const presign = (expiresSeconds: number) => () => presignUrl({ method: 'GET', url: new URL('https://b.example/k'), region: 'us-east-1', credentials, expiresSeconds });
    expect(presign(604_801)).to.throw(RangeError, /1 to 604800 seconds/);
    expect(presign(0)).to.throw(RangeError);
    expect(presign(604_800)).to.not.throw();
  });
});

describeOnS3('blob store: S3-compatible object storage (versitygw)', (s3) => {
  blobStoreConformance(s3Blobs(s3));

  describe('refusals', () => {
    let options: S3BlobStoreOptions;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ options, dispose } = await freshBucket(s3));
    });
    afterEach(() => dispose());

    const openError = (changed: Partial<S3BlobStoreOptions>) =>
      openS3BlobStore({ ...options, ...changed }).then(
        () => undefined,
        (err: unknown) => err as S3Error,
      );

    it('fails at open on a wrong secret (the gateway checks the signature), naming neither key', async () => {
      const err = await openError({ credentials: { accessKeyId: options.credentials.accessKeyId, secretAccessKey: 'not-the-secret-at-all' } });
      expect(err).to.be.instanceOf(S3Error);
      expect(err?.status).to.equal(403);
      expect(err?.message).to.not.include(options.credentials.secretAccessKey);
      expect(err?.message).to.not.include('not-the-secret-at-all');
    });

    it('fails at open on a bucket that does not exist', async () => {
      const err = await openError({ bucket: `${options.bucket}-missing` });
      expect(err).to.be.instanceOf(S3Error);
      expect(err?.status).to.equal(404);
    });

    it('says which endpoint did not answer when nothing listens there', async () => {
      const err = await openError({ endpoint: new URL('http://127.0.0.1:9') });
      expect(err).to.be.instanceOf(S3Error);
      expect(err?.message).to.match(/HeadBucket.*127\.0\.0\.1:9/);
    });
  });
});
