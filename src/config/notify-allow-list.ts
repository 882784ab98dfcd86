// --notify-allow: the hosts Sandgate may send to (notifications, resends, triggers, receiver
// checks). Anyone who can reach a shared sandbox names a notify_url; without a list, Sandgate would
// POST wherever they say, from inside the company network. Entries, comma-separated:
//   hooks.example.com      that host exactly (case-insensitive)
//   *.example.com          any host under example.com (not example.com itself)
//   10.0.0.0/8, fd00::/8   an address in that range, as the URL writes it
//   192.168.1.20, ::1      that address
// The URL's host is matched as written, without resolving it: a name is allowed by a name entry
// only, an address by an address or range entry. So what is checked is what is sent to, and a DNS
// answer cannot move a request past the list.
import { BlockList, isIP } from "node:net";

export interface AllowList {
  /** whether a URL's hostname (as URL.hostname gives it) may be sent to */
  allows(hostname: string): boolean;
  /** the list as given, for messages */
  readonly text: string;
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "").toLowerCase();
const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/;

/** Parses the list; throws an Error naming the first entry that is none of the forms above. */
export function parseAllowList(text: string): AllowList {
  const addresses = new BlockList();
  const names = new Set<string>();
  const suffixes: string[] = [];
  const entries = text
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (!entries.length) throw new Error("--notify-allow is empty: name at least one host or range (or leave it out to allow any host)");
  for (const entry of entries) {
    const [address, bits, extra] = entry.split("/");
    const family = isIP(bare(address!)) === 6 ? "ipv6" : isIP(bare(address!)) === 4 ? "ipv4" : undefined;
    if (family && bits === undefined) addresses.addAddress(bare(address!), family);
    else if (family && extra === undefined && /^\d{1,3}$/.test(bits!) && Number(bits) <= (family === "ipv4" ? 32 : 128))
      addresses.addSubnet(bare(address!), Number(bits), family);
    else if (bits === undefined && HOST.test(entry)) {
      if (entry.startsWith("*.")) suffixes.push(entry.slice(1).replace(/\.$/, ""));
      else names.add(entry.replace(/\.$/, ""));
    } else throw new Error(`--notify-allow: "${entry}" is not a host (hooks.example.com, *.example.com), an address or a range (10.0.0.0/8)`);
  }
  return {
    text: entries.join(","),
    allows(hostname) {
      const host = bare(hostname).replace(/\.$/, "");
      const family = isIP(host);
      if (family) return addresses.check(host, family === 6 ? "ipv6" : "ipv4");
      return names.has(host) || suffixes.some((s) => host.endsWith(s));
    },
  };
}
