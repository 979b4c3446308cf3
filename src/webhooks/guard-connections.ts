import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connection limits of the receiver. Slow or idle sockets cost a file descriptor each and, before
 * these limits, could hold every slot for up to a minute while real deliveries were refused.
 */
export interface ConnectionLimits {
  /** Open connections in all; past it, the oldest idle connection of the busiest address is closed. */
  maxConnections: number;
  /** Open connections from one client address; past it, that address's oldest idle one is closed. */
  maxPerAddress: number;
  /** Time allowed for a request's headers, and for the whole request (headers and body). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** A kept-alive connection with no request is closed after this. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  maxConnections: 1024,
  maxPerAddress: 128,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
});

export interface ConnectionStats {
  open: number;
  /** Open connections of the address that holds the most. */
  mostFromOneAddress: number;
  /** Connections closed to make room (idle ones, under the per-address or total limit). */
  evicted: number;
  /** New connections closed at once: their address or the server was full of busy ones. */
  refused: number;
}

interface Tracked {
  address: string;
  /** A request is being read or answered; such a connection is never evicted. */
  busy: boolean;
}

/**
 * Enforces the per-address and total limits on `server`. "Idle" means no request in progress:
 * a socket that has sent nothing, or only part of its headers, or that waits between kept-alive
 * requests. Sockets are kept per address in arrival order, so the oldest idle one goes first.
 */
export function guardConnections(server: Server, limits: ConnectionLimits): () => ConnectionStats {
  const sockets = new Map<Socket, Tracked>();
  const byAddress = new Map<string, Set<Socket>>();
  const stats = { evicted: 0, refused: 0 };

  const oldestIdle = (set: Iterable<Socket>): Socket | undefined => {
    for (const s of set) if (!sockets.get(s)?.busy) return s;
    return undefined;
  };
  const evict = (s: Socket): void => {
    stats.evicted++;
    forget(s);
    s.destroy();
  };
  const forget = (s: Socket): void => {
    const t = sockets.get(s);
    if (!t) return;
    sockets.delete(s);
    const set = byAddress.get(t.address);
    set?.delete(s);
    if (set && set.size === 0) byAddress.delete(t.address);
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const mine = byAddress.get(address);
    if (mine && mine.size >= limits.maxPerAddress) {
      const victim = oldestIdle(mine);
      if (!victim) {
        stats.refused++;
        socket.destroy();
        return;
      }
      evict(victim);
    }
    if (sockets.size >= limits.maxConnections) {
      // Under pressure: the address holding the most connections gives up its oldest idle one.
      let victim: Socket | undefined;
      const crowded = [...byAddress.values()].sort((a, b) => b.size - a.size);
      for (const set of crowded) if ((victim = oldestIdle(set))) break;
      if (!victim) {
        stats.refused++;
        socket.destroy();
        return;
      }
      evict(victim);
    }
    // Node's header timeout only covers a connection once its first bytes arrive: one that sends
    // nothing is closed after the same time of silence (node:http destroys it on 'timeout'; a
    // request in progress clears this, and a kept-alive one gets keepAliveTimeout).
    socket.setTimeout(limits.headersTimeoutMs);
    sockets.set(socket, { address, busy: false });
    let set = byAddress.get(address);
    if (!set) byAddress.set(address, (set = new Set()));
    set.add(socket);
    socket.once('close', () => forget(socket));
  });

  server.on('request', (req, res) => {
    const t = sockets.get(req.socket);
    if (!t) return;
    t.busy = true;
    req.socket.setTimeout(0);
    res.once('close', () => {
      t.busy = false;
      // Move it to the back: among idle connections, the one used longest ago goes first.
      const set = byAddress.get(t.address);
      if (set?.delete(req.socket)) set.add(req.socket);
    });
  });

  return () => {
    let most = 0;
    for (const set of byAddress.values()) most = Math.max(most, set.size);
    return { open: sockets.size, mostFromOneAddress: most, ...stats };
  };
}
