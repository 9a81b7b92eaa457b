import { describe, expect, it } from '@jest/globals';
import { ReadyPort } from './ready-port.js';

describe('a port ready after start', () => {
  it('is empty until set, then tells those waiting and later askers alike', () => {
    const port = new ReadyPort<string>();
    const seen: string[] = [];
    port.onReady((v) => seen.push(`early ${v}`));
    expect(port.get()).toBeUndefined();
    expect(seen).toEqual([]);
    port.set('usb');
    port.onReady((v) => seen.push(`late ${v}`));
    expect([port.get(), seen]).toEqual(['usb', ['early usb', 'late usb']]);
  });

  it('refuses a second value, keeping the first', () => {
    const port = ReadyPort.of(1);
    expect(() => port.set(2)).toThrow(/already set/);
    expect(port.get()).toBe(1);
  });
});
