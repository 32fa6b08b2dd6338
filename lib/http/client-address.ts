// The client's address, as the sign-in throttle and the audit trail name it: the connection's
// peer, or, when that peer is a trusted proxy (TRUSTED_PROXIES), the last address of
// X-Forwarded-For that is not itself a trusted proxy. Anyone may write the header: only a
// trusted proxy's word is taken.
import net from 'node:net';
import type { Context } from 'koa';

export function clientAddress(trusted: string[]): (ctx: Context) => string {
  const list = new net.BlockList();
  for (const entry of trusted) {
    const [address, prefix] = entry.split('/');
    const type = net.isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  const isTrusted = (address: string) => net.isIP(address) !== 0 && list.check(address, net.isIP(address) === 4 ? 'ipv4' : 'ipv6');
  return (ctx) => {
    const peer = plain(ctx.req.socket.remoteAddress ?? '');
    if (trusted.length === 0 || !isTrusted(peer)) return peer;
    const hops = (ctx.get('x-forwarded-for') || '').split(',').map((s) => plain(s.trim())).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      if (net.isIP(hops[i]) === 0) return peer; // a header the proxy did not write as it should
      if (!isTrusted(hops[i])) return hops[i];
    }
    return hops[0] ?? peer;
  };
}

/** `::ffff:10.0.0.1` is the IPv4 address 10.0.0.1. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && net.isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
