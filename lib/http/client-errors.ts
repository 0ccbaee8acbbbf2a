import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../errors.ts';

/**
 * Requests that Node's HTTP parser rejects never reach Koa, so without this they would get a bare
 * status line. Here they get the same JSON error shape as everything else: 431 for headers over
 * MAX_HEADER_BYTES, 400 for anything else the parser cannot read.
 */
export function answerClientErrorsAsJson(server: http.Server, maxHeaderBytes: number): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new HttpError(431, `Request headers too large: the limit is ${maxHeaderBytes} bytes`)
        : new HttpError(400, 'Bad request: the HTTP request could not be parsed');
    const body = JSON.stringify(error.toBody());
    const reason = error.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
