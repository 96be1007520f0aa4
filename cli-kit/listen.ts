// Listening on a port as a command does: resolved once listening, or one clear line for the user.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from './args.ts';

/** A listen error as one line: the port taken, or the address not ours. */
export function listenError(error: NodeJS.ErrnoException, port: number, option: string): Error {
  if (error.code === 'EADDRINUSE')
    return new UsageError(
      `port ${port} is in use: stop what listens there, or choose another with ${option} (0 picks a free one)`,
    );
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return new UsageError(
      `cannot listen on that host (${error.code}): use an address of this machine, e.g. 127.0.0.1 or 0.0.0.0`,
    );
  if (error.code === 'EACCES') return new UsageError(`no permission to listen on port ${port}: use a port above 1023`);
  return error;
}

/** Listens and resolves with the port bound; a port in use or a bad host rejects with one line. */
export async function listen(server: http.Server, port: number, host: string, option: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port, option)));
    server.listen(port, host, resolve);
  });
  return (server.address() as AddressInfo).port;
}
