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

/** node:http sets this while a request on the socket is being read or answered. */
type HttpSocket = Socket & { _httpMessage?: unknown };

/**
 * Enforces the per-address and total limits on `server`. "Idle" means no request in progress:
 * a socket that has sent nothing, or only part of its headers, or that waits between kept-alive
 * requests. Sockets are kept per address in arrival order, so the oldest idle one goes first.
 * Nothing runs per request but a check of the socket's timeout (the hot path stays as it was).
 */
export function guardConnections(server: Server, limits: ConnectionLimits): () => ConnectionStats {
  const sockets = new Map<Socket, string>();
  const byAddress = new Map<string, Set<Socket>>();
  const stats = { evicted: 0, refused: 0 };

  const oldestIdle = (set: Iterable<Socket>): Socket | undefined => {
    for (const s of set) if (!(s as HttpSocket)._httpMessage) return s;
    return undefined;
  };
  const evict = (s: Socket): void => {
    stats.evicted++;
    forget(s);
    s.destroy();
  };
  const forget = (s: Socket): void => {
    const address = sockets.get(s);
    if (address === undefined) return;
    sockets.delete(s);
    const set = byAddress.get(address);
    set?.delete(s);
    if (set && set.size === 0) byAddress.delete(address);
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
    sockets.set(socket, address);
    let set = byAddress.get(address);
    if (!set) byAddress.set(address, (set = new Set()));
    set.add(socket);
    socket.once('close', () => forget(socket));
  });

  // A request in progress is not silence: node:http clears the timeout itself only on kept-alive
  // connections (and sets keepAliveTimeout once the response is sent).
  server.on('request', (req) => {
    if (req.socket.timeout) req.socket.setTimeout(0);
  });

  return () => {
    let most = 0;
    for (const set of byAddress.values()) most = Math.max(most, set.size);
    return { open: sockets.size, mostFromOneAddress: most, ...stats };
  };
}
