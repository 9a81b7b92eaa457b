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

  it('gives each JavaScript frame its time with its callees, as a share of the busy time', () => {
    const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
      id,
      callFrame: { functionName, url, lineNumber: 0 },
      children,
    });
    // reconcile -> decode -> parse (npm), reconcile -> write (node), reconcile -> reconcile (recursion); idle beside.
    const profile = {
      nodes: [
        frame(1, '(root)', '', [2, 3]),
        frame(2, '(idle)', ''),
        frame(3, 'reconcile', 'file:///r/ours.js', [4, 6, 7]),
        frame(4, 'decode', 'file:///r/ours.js', [5]),
        frame(5, 'parse', 'file:///r/node_modules/zod/a.js'),
        frame(6, 'write', 'node:net'),
        frame(7, 'reconcile', 'file:///r/ours.js'),
      ],
      samples: [2, 5, 5, 6, 7, 3, 4],
      timeDeltas: [500, 200, 200, 100, 300, 100, 100],
    };
    const summary = summarizeProfile(profile, 10);
    expect(summary.totalMs).toBe(1.5);
    expect(summary.inclusive).toEqual([
      { frame: 'reconcile /r/ours.js:1', share: 1 },
      { frame: 'decode /r/ours.js:1', share: 0.5 },
      { frame: 'parse npm:zod/a.js:1', share: 0.4 },
    ]);
  });

  it('summarizes an empty profile without dividing by zero', () => {
    expect(summarizeProfile({ nodes: [], samples: [], timeDeltas: [] }, 5)).toEqual({ totalMs: 0, frames: [], packages: [], inclusive: [] });
  });
});
