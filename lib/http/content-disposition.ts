// The Content-Disposition header of a multipart part (RFC 7578, with RFC 6266's parameters): its
// `name` and, when present, its file name. Clients differ: browsers and urllib3 2 send raw UTF-8
// in a quoted `filename` with `"` as %22 (HTML5), curl escapes `"` with a backslash, urllib3 1
// and some HTTP libraries send RFC 5987's `filename*=UTF-8''...`, which wins when both are sent.

export interface PartDisposition {
  name: string | undefined;
  /** The file name the client sent; undefined when the part has no filename parameter (a field). */
  filename: string | undefined;
}

export function parsePartDisposition(header: string): PartDisposition {
  const params = parameters(header);
  const extended = params.has('filename*') ? decodeExtValue(params.get('filename*')!) : undefined;
  const plain = params.get('filename');
  return {
    name: params.get('name'),
    filename: extended ?? (plain === undefined ? undefined : plain.replace(/%22/g, '"')),
  };
}

/** The parameters after the disposition type, names lower-cased, quoted strings unquoted. */
function parameters(header: string): Map<string, string> {
  const params = new Map<string, string>();
  let i = header.indexOf(';');
  if (i < 0) return params;
  while (i < header.length) {
    while (i < header.length && (header[i] === ';' || header[i] === ' ' || header[i] === '\t')) i++;
    const eq = header.indexOf('=', i);
    if (eq < 0) break;
    const key = header.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (header[i] === ' ' || header[i] === '\t') i++;
    let value = '';
    if (header[i] === '"') {
      // A quoted string: a backslash escapes only `"` and `\` (a Windows path keeps its backslashes).
      for (i++; i < header.length && header[i] !== '"'; i++) {
        if (header[i] === '\\' && (header[i + 1] === '"' || header[i + 1] === '\\')) i++;
        value += header[i];
      }
      i++; // the closing quote
      const end = header.indexOf(';', i);
      i = end < 0 ? header.length : end;
    } else {
      const end = header.indexOf(';', i);
      value = header.slice(i, end < 0 ? header.length : end).trim();
      i = end < 0 ? header.length : end;
    }
    if (key && !params.has(key)) params.set(key, value);
  }
  return params;
}

/** RFC 5987 `charset'language'percent-encoded`; undefined when it cannot be decoded. */
function decodeExtValue(value: string): string | undefined {
  const m = /^([A-Za-z0-9!#$%&+^_`{}~-]+)'[^']*'(.*)$/.exec(value);
  if (!m) return undefined;
  const charset = m[1].toLowerCase();
  const bytes: number[] = [];
  for (let i = 0; i < m[2].length; i++) {
    if (m[2][i] === '%' && /^[0-9A-Fa-f]{2}$/.test(m[2].slice(i + 1, i + 3))) {
      bytes.push(parseInt(m[2].slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(m[2][i], 'utf8'));
    }
  }
  if (charset === 'utf-8') {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    } catch {
      return undefined;
    }
  }
  if (charset === 'iso-8859-1') return Buffer.from(bytes).toString('latin1');
  return undefined;
}
