/** GET /captures/{id}'s JSON answer, for the OpenAPI document (service.ts's CaptureStatus). */
const timestamp = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description });

export const captureStatusSchema = {
  type: 'object',
  required: ['id', 'status', 'url', 'createdAt', 'attempts', 'maxAttempts', 'statusUrl'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
    url: { type: 'string', description: 'The URL captured' },
    createdAt: { type: 'string', format: 'date-time', description: 'When it was submitted' },
    startedAt: timestamp('When the latest attempt started'),
    finishedAt: timestamp('When it succeeded or failed for good'),
    expiresAt: timestamp('When the finished capture and its image are removed'),
    attempts: { type: 'integer', description: 'Attempts so far (retries back off exponentially)' },
    maxAttempts: { type: 'integer' },
    lastError: { type: ['string', 'null'], description: 'The error of the latest failed attempt' },
    statusUrl: { type: 'string' },
    webhook: {
      type: 'object',
      description: 'Only with a webhookUrl',
      properties: {
        url: { type: 'string' },
        status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
        attempts: { type: 'integer' },
        lastError: { type: ['string', 'null'] },
        deliveredAt: timestamp('When the receiver answered 2xx'),
        nextAttemptAt: timestamp('When the next attempt is due, while one is'),
      },
    },
    result: { type: 'object', description: 'Once succeeded: the synchronous answer (success, image as a data URI, url, quality, width, height, fileSize, processingTimeMs, waitMs, site_id...)' },
  },
};
