/** The certificate manager's part in CRD conversion webhooks: set the webhook once, then keep its CA. */
import { describe, expect, it } from '@jest/globals';
import { conversionPatchFor } from './manager.js';
import type { Crd } from './resources.js';

const annotated = (conversion?: Record<string, unknown>): Crd => ({
  metadata: {
    name: 'virtualmachineclasses.virtualization.deckhouse.io',
    annotations: { 'virtualization.deckhouse.io/conversion-webhook': 'admission-webhook/convert' },
  },
  spec: conversion === undefined ? {} : { conversion },
});

describe('the conversion webhook of a labelled CRD', () => {
  it('is set, with the bundle, on the annotated Service of our namespace once that Service exists', () => {
    expect(conversionPatchFor(annotated({ strategy: 'None' }), 'Q0E=', 'd8-virtualization', true)).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { service: { namespace: 'd8-virtualization', name: 'admission-webhook', path: '/convert', port: 443 }, caBundle: 'Q0E=' },
      },
    });
  });

  it('is left alone while the Service is missing, the bundle unknown, or the CRD not annotated', () => {
    expect(conversionPatchFor(annotated(), 'Q0E=', 'd8-virtualization', false)).toBeUndefined();
    expect(conversionPatchFor(annotated(), undefined, 'd8-virtualization', true)).toBeUndefined();
    expect(conversionPatchFor({ metadata: { name: 'x' } }, 'Q0E=', 'd8-virtualization', true)).toBeUndefined();
  });

  it('only gets a changed bundle once it is a Webhook conversion, keeping its Service reference as found', () => {
    const webhook = { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 'admission-webhook', port: 31443 }, caBundle: 'b2xk' } } };
    expect(conversionPatchFor(annotated(webhook), 'bmV3', 'd8-virtualization', true)).toEqual({ webhook: { clientConfig: { caBundle: 'bmV3' } } });
    expect(conversionPatchFor(annotated(webhook), 'b2xk', 'd8-virtualization', true)).toBeUndefined();
  });
});
