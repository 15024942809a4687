// One HTTP(S) request whose whole answer is read as text: what `plan --kubeconfig` and the operator's client send
// for everything but watches. A request that gets no answer within `timeoutMs` is abandoned with an error.
import * as http from 'node:http';
import * as https from 'node:https';

export interface TextAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

export function requestText(
  url: URL,
  options: https.RequestOptions,
  body: string | undefined,
  timeoutMs: number,
): Promise<TextAnswer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<TextAnswer>((resolve, reject) => {
    const request = client.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.setTimeout(timeoutMs, () =>
      request.destroy(new Error(`${options.method ?? 'GET'} ${url.pathname}: no answer within ${timeoutMs / 1000} s`)),
    );
    request.on('error', reject);
    request.end(body);
  });
}
