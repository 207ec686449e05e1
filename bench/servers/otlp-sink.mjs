// An OTLP/HTTP receiver that keeps nothing: it reads each export (protobuf or JSON, gzip or not), counts
// its spans and answers 200 with an empty response, as a collector that accepted everything would.
// GET /stats answers {requests, bytes, spans, failures} so far. bench/tracing.mjs runs it as its own
// process, so that decoding exports takes no time from the load generator.
//
//   PORT=4318 HOST=127.0.0.1 node bench/servers/otlp-sink.mjs
import http from 'node:http';
import { gunzipSync } from 'node:zlib';

const stats = { requests: 0, bytes: 0, spans: 0, failures: 0 };

/** The length-delimited fields numbered `field` of one protobuf message, as [start, end) ranges. */
function messages(buf, start, end, field) {
  const out = [];
  let at = start;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = buf[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < end) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      if (key >>> 3 === field) out.push([at, at + length]);
      at += length;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

/** Spans in an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2). */
function protobufSpans(buf) {
  let spans = 0;
  for (const [rs, re] of messages(buf, 0, buf.length, 1)) {
    for (const [ss, se] of messages(buf, rs, re, 2)) spans += messages(buf, ss, se, 2).length;
  }
  return spans;
}

function jsonSpans(text) {
  const body = JSON.parse(text);
  let spans = 0;
  for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
  return spans;
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    stats.requests += 1;
    stats.bytes += raw.length;
    const json = (req.headers['content-type'] ?? '').includes('json');
    try {
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      if (req.url === '/v1/traces') stats.spans += json ? jsonSpans(body.toString('utf8')) : protobufSpans(body);
    } catch {
      stats.failures += 1;
    }
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    res.end(json ? '{}' : undefined);
  });
});
server.listen(Number(process.env.PORT ?? 4318), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
