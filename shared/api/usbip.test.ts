import { describe, expect, it } from '@jest/globals';
import { USBIP_HS_USED_ANNOTATION, USBIP_SS_USED_ANNOTATION, USBIP_TOTAL_PORTS_ANNOTATION, usbipHubFor, usbipPortFree } from './usbip.js';

const marks = (total: string | undefined, hs: string | undefined, ss: string | undefined): Record<string, string> => ({
  ...(total === undefined ? {} : { [USBIP_TOTAL_PORTS_ANNOTATION]: total }),
  ...(hs === undefined ? {} : { [USBIP_HS_USED_ANNOTATION]: hs }),
  ...(ss === undefined ? {} : { [USBIP_SS_USED_ANNOTATION]: ss }),
});

describe('usbipHubFor', () => {
  it.each([
    [1.5, 'hs'],
    [12, 'hs'],
    [480, 'hs'],
    [5000, 'ss'],
    [10000, 'ss'],
    [undefined, 'hs'],
  ])('speed %j goes to the %s hub', (speed, hub) => expect(usbipHubFor(speed)).toBe(hub));
});

describe('usbipPortFree', () => {
  it.each([
    ['a free high-speed port', marks('8', '3', '4'), 480, 'free'],
    ['the high-speed hub full (half of the total each)', marks('8', '4', '0'), 480, 'full'],
    ['a SuperSpeed device counts the SuperSpeed hub', marks('8', '4', '3'), 5000, 'free'],
    ['the SuperSpeed hub full', marks('8', '0', '4'), 5000, 'full'],
    ['an odd total rounds the hubs down', marks('3', '1', '0'), 480, 'full'],
    ['no annotations at all', undefined, 480, 'unknown'],
    ['no total', marks(undefined, '0', '0'), 480, 'unknown'],
    ['no count for the hub', marks('8', undefined, '0'), 480, 'unknown'],
    ['garbage total', marks('eight', '0', '0'), 480, 'unknown'],
    ['negative count', marks('8', '-1', '0'), 480, 'unknown'],
    ['huge count', marks('8', '99999999999', '0'), 480, 'unknown'],
  ])('%s', (_, annotations, speed, verdict) => expect(usbipPortFree(annotations, speed)).toBe(verdict));
});
