/**
 * Who runs an unfinished handler when several servers share one store: the lease written with
 * the handler's snapshot names one server (its holder) until a time. A server takes a handler
 * over only when the lease has ended, was released (the holder stopped cleanly), or names a
 * process known to be gone; the store's versioned save makes the take-over atomic.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

/** A lease as stored: the holder ("host/pid/instance") and when it ends (ms since the epoch). */
export interface HandlerLease {
  readonly holder: string;
  readonly until: number;
}

/** How long a lease lasts unless renewed; the holder renews it a third of the way through. */
export const LEASE_MS = 30_000;

/** The servers of this process that are open: a lease naming one of them is held, whatever its age. */
const openHolders = new Set<string>();

/** This process's name for one server: host, pid, and an id of its own. */
export function newHolder(): string {
  const holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  openHolders.add(holder);
  return holder;
}

/** The server named `holder` has stopped: its leases are free for another server of this process. */
export function closeHolder(holder: string): void {
  openHolders.delete(holder);
}

/**
 * Whether `lease` still keeps other servers off its handler: not released, not past its end, and
 * not held by a process of this host that is gone (a server killed and started again on the same
 * machine takes its runs back at once, not a lease's length later).
 */
export function leaseHeld(lease: HandlerLease | undefined, now = Date.now()): lease is HandlerLease {
  if (!lease || lease.until <= now) return false;
  const [host, pidText] = lease.holder.split("/");
  if (host !== hostname()) return true;
  const pid = Number(pidText);
  if (pid === process.pid) return openHolders.has(lease.holder);
  return processAlive(pid);
}

function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true; // not ours to judge: wait for the lease to end
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
