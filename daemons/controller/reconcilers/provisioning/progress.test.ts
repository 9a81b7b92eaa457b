import { describe, expect, it } from '@jest/globals';
import { settleProgress } from './progress.js';

describe('the progress contract', () => {
  it.each([
    ['Pending', '42.0%', undefined],
    ['Pending', undefined, undefined],
    [undefined, '10.0%', undefined],
    ['Failed', '60.0%', undefined],
    ['Provisioning', '37.5%', '37.5%'],
    ['Provisioning', '100.0%', '99.9%'],
    ['Provisioning', '100%', '99.9%'],
    ['Provisioning', undefined, undefined],
    ['Provisioning', 'garbage', undefined],
    ['WaitForUserUpload', '100.0%', '99.9%'],
    ['WaitForFirstConsumer', '50.0%', '50.0%'],
    ['Ready', undefined, '100%'],
    ['Ready', '99.9%', '100%'],
    ['Resizing', '100%', '100%'],
    ['PVCLost', '100%', '100%'],
  ])('phase %s with progress %s shows %s', (phase, progress, want) => {
    const status: { phase?: string; progress?: string } = {};
    if (phase !== undefined) status.phase = phase;
    if (progress !== undefined) status.progress = progress;
    settleProgress(status);
    expect(status.progress).toBe(want);
  });
});
