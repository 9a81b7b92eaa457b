export { generateKey, issueCertificate, toPem, type CertificatePair, type CertificateUsage, type IssueOptions, type KeyPair } from './x509.js';
export { inspectPair, renewAt, type InspectInput, type InspectResult } from './inspect.js';
export { CertificateOptionsError, DerDecodeError } from './errors.js';
