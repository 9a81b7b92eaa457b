import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request, createServer, type RequestOptions, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { issueCertificate, type CertificatePair } from './x509.js';

const now = Date.now();
const times = { notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000) };
const ca = issueCertificate({ commonName: 'virt-ca', usage: 'ca', ...times });
const otherCa = issueCertificate({ commonName: 'virt-ca', usage: 'ca', ...times });
const serving = issueCertificate({
  commonName: 'admission',
  dnsNames: ['admission.d8-virtualization.svc'],
  ipAddresses: ['127.0.0.1'],
  usage: 'server',
  issuer: ca,
  ...times,
});
const client = issueCertificate({ commonName: 'virt-controller', usage: 'client', issuer: ca, ...times });

/** An HTTPS server on 127.0.0.1 that asks for (and checks) a client certificate but does not require one. */
function listen(pair: CertificatePair): Promise<Server> {
  const server = createServer({ cert: pair.certPem, key: pair.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerCertificate();
    res.end(socket.authorized ? `hello ${String(peer.subject.CN)}` : 'hello anonymous');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function get(port: number, options: RequestOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false, ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('issued certificates in a real TLS handshake', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = await listen(serving);
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is trusted by a client that trusts only the CA and asks for the DNS name', async () => {
    expect(await get(port, { ca: ca.certPem, servername: 'admission.d8-virtualization.svc' })).toBe('hello anonymous');
  });

  it('is refused by a client trusting another CA with the same name', async () => {
    // The server sends the leaf and its CA (OpenSSL completes the chain from the server's `ca`); the
    // client trusts neither, so it sees an untrusted self-signed CA at the top.
    await expect(get(port, { ca: otherCa.certPem, servername: 'admission.d8-virtualization.svc' })).rejects.toMatchObject({
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
  });

  it('matches 127.0.0.1 through its IP SAN, and refuses a name it does not carry', async () => {
    expect(await get(port, { ca: ca.certPem })).toBe('hello anonymous');
    await expect(get(port, { ca: ca.certPem, servername: 'other.d8-virtualization.svc' })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('authenticates a client certificate issued by the same CA, and not one from another CA', async () => {
    expect(await get(port, { ca: ca.certPem, cert: client.certPem, key: client.keyPem })).toBe('hello virt-controller');
    const stranger = issueCertificate({ commonName: 'stranger', usage: 'client', issuer: otherCa, ...times });
    expect(await get(port, { ca: ca.certPem, cert: stranger.certPem, key: stranger.keyPem })).toBe('hello anonymous');
  });
});
