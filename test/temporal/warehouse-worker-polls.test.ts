import { describe, expect, it } from 'vitest';
import { pollerIsLive } from '../../src/temporal/warehouse-worker-polls.js';

const NOW = 1_800_000_000_000;
const alive = (pid: number): boolean => pid === 100;

describe('pollerIsLive', () => {
  it('a recent poller of a process still running here, or of another host, is a running worker', () => {
    expect(pollerIsLive({ lastAccessMs: NOW - 1_000, identity: '100@here' }, NOW, 'here', alive)).toBe(true);
    expect(pollerIsLive({ lastAccessMs: NOW - 1_000, identity: '200@elsewhere' }, NOW, 'here', alive)).toBe(true);
    // An identity set by hand says nothing about a process: the file decides, as before.
    expect(pollerIsLive({ lastAccessMs: NOW - 1_000, identity: 'warehouse-worker-1' }, NOW, 'here', alive)).toBe(true);
  });

  it('the last command of this host, exited a moment ago, is not: its pollers stay listed for a minute', () => {
    expect(pollerIsLive({ lastAccessMs: NOW - 1_000, identity: '200@here' }, NOW, 'here', alive)).toBe(false);
  });

  it('a poller unseen for over 70 s is not, whoever it was', () => {
    expect(pollerIsLive({ lastAccessMs: NOW - 70_000, identity: '100@here' }, NOW, 'here', alive)).toBe(false);
    expect(pollerIsLive({ lastAccessMs: undefined, identity: '100@here' }, NOW, 'here', alive)).toBe(false);
  });
});
