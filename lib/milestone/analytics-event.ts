// A camera's change of state as a Milestone XProtect analytics event: the `AnalyticsEvent`
// document (namespace urn:milestone-systems) that XProtect's event server takes on its analytics
// events port (9090 by default). XProtect raises an alarm from it when its `Message` matches an
// analytics event defined there and its `Source` names a camera it knows (docs/events.md).
// Elements are written in the order the published schema's sequences give them.
import { create } from 'xmlbuilder2';
import { SERVER_HEADER } from '../version.js';

export const MILESTONE_NAMESPACE = 'urn:milestone-systems';
/** XProtect's kind of a camera item (VideoOS.Platform.Kind.Camera), for the source's FQID. */
export const CAMERA_KIND = '5135BA21-F1DC-4321-806A-6CE2017343C0';
/** Named as the vendor of every event. */
export const VENDOR_NAME = 'Video analytics appliance';

export interface AnalyticsEventFields {
  /** The event's own id (the outbox's event id): a GUID. */
  id: string;
  /** When the camera's state changed, ms. */
  at: number;
  /** When the condition began (the change, or a held alarm's start), ms. */
  startTime: number;
  /** What XProtect matches against its analytics events' names. */
  message: string;
  /** The tamper check's type of event, shown beside the message. */
  type: string;
  description: string;
  source: { name: string; objectId: string | null };
  /** A frame of the check that raised the event, as JPEG. */
  snapshot: { jpeg: Buffer; width: number; height: number } | null;
  /** What an integrator's own tooling may read (the appliance's event as JSON). */
  customData: Record<string, unknown>;
}

export function analyticsEventXml(e: AnalyticsEventFields): string {
  const doc = create({ version: '1.0', encoding: 'utf-8' });
  const root = doc.ele(MILESTONE_NAMESPACE, 'AnalyticsEvent');
  // children in the document's default namespace, as the schema's qualified elements are
  const ele = (parent: typeof root, name: string, text?: string | number) => {
    const node = parent.ele(MILESTONE_NAMESPACE, name);
    if (text !== undefined) node.txt(String(text));
    return node;
  };
  const header = ele(root, 'EventHeader');
  ele(header, 'ID', e.id);
  ele(header, 'Timestamp', xsDateTime(e.at));
  ele(header, 'Class', 'Analytics');
  ele(header, 'Type', e.type);
  ele(header, 'Version', '1.0');
  ele(header, 'Message', e.message);
  const source = ele(header, 'Source');
  ele(source, 'Name', e.source.name);
  if (e.source.objectId) {
    const fqid = ele(source, 'FQID');
    ele(fqid, 'ObjectId', e.source.objectId);
    ele(fqid, 'FolderType', 0); // not a folder
    ele(fqid, 'Kind', CAMERA_KIND);
  }
  ele(root, 'Description', e.description);
  ele(root, 'StartTime', xsDateTime(e.startTime));
  if (e.snapshot) {
    const snapshot = ele(ele(root, 'SnapshotList'), 'Snapshot');
    ele(snapshot, 'TimeOffset', 0); // the frame is of the check that changed the state
    ele(snapshot, 'Width', e.snapshot.width);
    ele(snapshot, 'Height', e.snapshot.height);
    ele(snapshot, 'HasOverlay', 'false');
    ele(snapshot, 'SizeInBytes', e.snapshot.jpeg.length);
    ele(snapshot, 'Image', e.snapshot.jpeg.toString('base64'));
  }
  const vendor = ele(root, 'Vendor');
  ele(vendor, 'Name', VENDOR_NAME);
  ele(vendor, 'CustomData', JSON.stringify({ ...e.customData, software: SERVER_HEADER }));
  return doc.end({ prettyPrint: false });
}

/** xs:dateTime in UTC with milliseconds (ISO 8601 ending in Z), as the schema's dateTime takes it. */
export const xsDateTime = (ms: number) => new Date(ms).toISOString();
