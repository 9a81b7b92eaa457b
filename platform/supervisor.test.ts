import { describe, expect, it } from '@jest/globals';
import type { LoggedProcess } from '../tests/env/process.js';
import { Supervisor } from './supervisor.js';

/** A process that ends when stopped (or when `die` is called), recording the order of stops. */
function fakeProcess(name: string, stops: string[]): LoggedProcess & { die(code: number): void } {
  let done = false;
  let end: (v: number | string) => void = () => undefined;
  const exited = new Promise<number | string>((r) => (end = r));
  return {
    name,
    pid: 0,
    logPath: `/logs/${name}.log`,
    exited,
    hasExited: () => done,
    stop: () => {
      stops.push(name);
      done = true;
      end(0);
      return Promise.resolve();
    },
    kill: () => Promise.resolve(),
    die(code: number) {
      done = true;
      end(code);
    },
  };
}

describe('the supervisor', () => {
  it('stops the last started first, a process that outlives another right after it', async () => {
    const stops: string[] = [];
    const s = new Supervisor();
    for (const n of ['etcd', 'kube-apiserver', 'kwok']) s.add(fakeProcess(n, stops));
    s.add(fakeProcess('controller', stops));
    s.add(fakeProcess('audit', stops), { outlives: 'kube-apiserver' });
    s.add(fakeProcess('admission', stops));
    await s.stopAll();
    expect(stops).toEqual(['admission', 'controller', 'kwok', 'kube-apiserver', 'audit', 'etcd']);
  });

  it('reports the first process that ends on its own, with its exit and log, and none while stopping', async () => {
    const s = new Supervisor();
    const a = fakeProcess('a', []);
    const b = fakeProcess('b', []);
    s.add(a);
    s.add(b);
    b.die(137);
    await expect(s.crashed).resolves.toEqual({ name: 'b', exit: 137, logPath: '/logs/b.log' });
    expect(s.running()).toEqual({ a: 0 });
  });
});
