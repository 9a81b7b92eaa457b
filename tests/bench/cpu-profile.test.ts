import { describe, expect, it } from '@jest/globals';
import { summarizeProfile } from './cpu-profile.js';

describe('CPU profile summary', () => {
  it('adds self time per frame and per npm package, largest first', () => {
    const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 9 } });
    const profile = {
      nodes: [
        frame(1, '(idle)', ''),
        frame(2, 'next', 'file:///r/node_modules/router/index.js'),
        frame(3, 'handle', 'file:///r/node_modules/@scope/pkg/a.js'),
        frame(4, 'end', 'node:_http_outgoing'),
      ],
      samples: [1, 2, 2, 3, 4, 2],
      timeDeltas: [100, 300, 300, 200, 100, 0],
    };
    const summary = summarizeProfile(profile, 2);
    expect(summary.totalMs).toBe(1);
    expect(summary.frames).toEqual([
      { frame: 'next npm:router/index.js:10', share: 0.6 },
      { frame: 'handle npm:@scope/pkg/a.js:10', share: 0.2 },
    ]);
    expect(summary.packages.map((p) => p.frame)).toEqual(['router', '@scope/pkg']);
  });

  it('summarizes an empty profile without dividing by zero', () => {
    expect(summarizeProfile({ nodes: [], samples: [], timeDeltas: [] }, 5)).toEqual({ totalMs: 0, frames: [], packages: [] });
  });
});
