// Checks an XProtect analytics event as Milestone's published schema (AnalyticsEvent.xsd of its
// protocol samples) describes it, for the elements the appliance may send: every element in the
// namespace urn:milestone-systems, known children only, in the schema's order, the required ones
// present, none repeated, and each value of its type (GUID, xs:dateTime, xs:int, xs:unsignedInt,
// xs:unsignedByte, xs:boolean, xs:base64Binary). Returns the document as nested records for the
// test's own assertions on values.
import { create } from 'xmlbuilder2';

const NS = 'urn:milestone-systems';

type Simple = 'string' | 'guid' | 'dateTime' | 'int' | 'unsignedInt' | 'unsignedShort' | 'unsignedByte' | 'boolean' | 'base64' | 'double';
/** A complex type: its children in sequence, each [name, type, required]. */
type Sequence = [string, Simple | Sequence, boolean][];

const FQID: Sequence = [
  ['ServerId', [['Type', 'string', false], ['Hostname', 'string', false], ['Port', 'int', false], ['Id', 'guid', true]], false],
  ['ParentId', 'guid', false],
  ['ObjectId', 'guid', false],
  ['ObjectIdString', 'string', false],
  ['FolderType', 'unsignedByte', true],
  ['Kind', 'guid', true],
];
const EVENT_HEADER: Sequence = [
  ['ID', 'guid', true],
  ['Timestamp', 'dateTime', true],
  ['Class', 'string', false],
  ['Type', 'string', false],
  ['Version', 'string', false],
  ['Priority', 'unsignedShort', false],
  ['Name', 'string', false],
  ['Message', 'string', true],
  ['CustomTag', 'string', false],
  ['Source', [['Name', 'string', false], ['Description', 'string', false], ['FQID', FQID, false]], false],
];
const SNAPSHOT: Sequence = [
  ['TimeOffset', 'int', true],
  ['Width', 'unsignedInt', false],
  ['Height', 'unsignedInt', false],
  ['HasOverlay', 'boolean', false],
  ['SizeInBytes', 'unsignedInt', false],
  ['Image', 'base64', false],
  ['Path', 'string', false],
  ['FQID', FQID, false],
];
/** The document's root. RuleList and ObjectList are left out: the appliance sends neither, and any would fail here. */
const ANALYTICS_EVENT: Sequence = [
  ['EventHeader', EVENT_HEADER, true],
  ['Description', 'string', false],
  ['StartTime', 'dateTime', false],
  ['EndTime', 'dateTime', false],
  ['Location', 'string', false],
  ['Count', 'unsignedInt', false],
  ['ReferenceList', [['Reference', [['FQID', FQID, false]], false]], false],
  ['SnapshotList', [['Snapshot', SNAPSHOT, false]], false],
  ['Vendor', [['Name', 'string', false], ['CustomData', 'string', false]], false],
];

const PATTERNS: Record<Exclude<Simple, 'string'>, RegExp> = {
  guid: /^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$/,
  dateTime: /^-?\d{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/,
  int: /^[+-]?\d+$/,
  unsignedInt: /^\+?\d+$/,
  unsignedShort: /^\+?\d+$/,
  unsignedByte: /^\+?\d+$/,
  boolean: /^(true|false|1|0)$/,
  base64: /^[A-Za-z0-9+/\s]*={0,2}\s*$/,
  double: /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^(INF|-INF|NaN)$/,
};
const LIMITS: Partial<Record<Simple, number>> = { unsignedByte: 255, unsignedShort: 65535, unsignedInt: 4294967295, int: 2147483647 };

export type Parsed = { [name: string]: Parsed | string };

export function checkAnalyticsEvent(xml: string): Parsed {
  const root = create(xml).root().node as unknown as Element;
  if (root.localName !== 'AnalyticsEvent' || root.namespaceURI !== NS) throw new Error(`the root is {${root.namespaceURI}}${root.localName}, not {${NS}}AnalyticsEvent`);
  return checkSequence(root, ANALYTICS_EVENT, 'AnalyticsEvent');
}

function checkSequence(element: Element, sequence: Sequence, where: string): Parsed {
  const out: Parsed = {};
  const children = [...element.childNodes].filter((n) => n.nodeType === 1) as Element[];
  const text = [...element.childNodes].filter((n) => n.nodeType === 3 && n.textContent!.trim() !== '');
  if (text.length > 0) throw new Error(`${where} holds text beside its elements`);
  let at = 0; // the place in the sequence the next child may take
  for (const child of children) {
    const path = `${where}/${child.localName}`;
    if (child.namespaceURI !== NS) throw new Error(`${path} is in namespace ${child.namespaceURI}, not ${NS}`);
    const place = sequence.findIndex(([name]) => name === child.localName);
    if (place < 0) throw new Error(`${path} is not an element of ${where} (it takes ${sequence.map(([n]) => n).join(', ')})`);
    const repeatable = (where.endsWith('/SnapshotList') && child.localName === 'Snapshot') || (where.endsWith('/ReferenceList') && child.localName === 'Reference');
    if (place === at - 1 && !repeatable) throw new Error(`${path} appears twice`);
    if (place < at - 1) throw new Error(`${path} comes after ${sequence[at - 1][0]}; the schema's order puts it before`);
    for (let skipped = at; skipped < place; skipped++) if (sequence[skipped][2]) throw new Error(`${where} lacks ${sequence[skipped][0]}, which it requires`);
    at = place + 1;
    const type = sequence[place][1];
    out[child.localName] = typeof type === 'string' ? checkValue(child, type, path) : checkSequence(child, type, path);
  }
  for (let rest = at; rest < sequence.length; rest++) if (sequence[rest][2]) throw new Error(`${where} lacks ${sequence[rest][0]}, which it requires`);
  return out;
}

function checkValue(element: Element, type: Simple, path: string): string {
  if ([...element.childNodes].some((n) => n.nodeType === 1)) throw new Error(`${path} is a ${type} but holds elements`);
  const value = element.textContent ?? '';
  if (type === 'string') return value;
  const v = type === 'base64' ? value : value.trim();
  if (!PATTERNS[type].test(v)) throw new Error(`${path} is not a valid ${type}: ${JSON.stringify(v.slice(0, 60))}`);
  if (LIMITS[type] !== undefined && Number(v) > LIMITS[type]!) throw new Error(`${path} is out of range for ${type}: ${v}`);
  if (type === 'dateTime' && Number.isNaN(Date.parse(v))) throw new Error(`${path} is not a date: ${v}`);
  return v;
}
