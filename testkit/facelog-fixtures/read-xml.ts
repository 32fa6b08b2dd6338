// Reads a face log's faces.xml (the format lib/facelog/output/xml.ts writes) back into plain
// records, for scoring and for tests.
import { convert } from 'xmlbuilder2';

export interface XmlFace {
  frame: number;
  track: number;
  confidence: number;
  x: number;
  y: number;
  width: number;
  height: number;
  detected: boolean;
}

export interface XmlTrack {
  number: number;
  /** "" when the track's sighting was too weak to report. */
  sighting: string;
  thumbnail?: string;
}

export interface FaceLogXml {
  /** The parsed document's root element (its attributes under `@name`). */
  root: any;
  faces: XmlFace[];
  tracks: XmlTrack[];
  sightings: { id: string; tracks: number[] }[];
}

export function parseFaceLogXml(text: string): FaceLogXml {
  const doc = convert(text, { format: 'object' }) as any;
  const root = doc.face_log;
  const list = (x: any): any[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
  const faces = list(root.faces?.face).map((f) => ({
    frame: Number(f['@frame']),
    track: Number(f['@track']),
    confidence: Number(f['@confidence']),
    x: Number(f['@x']),
    y: Number(f['@y']),
    width: Number(f['@width']),
    height: Number(f['@height']),
    detected: f['@detected'] === 'true',
  }));
  const tracks = list(root.tracks?.track).map((t) => ({ number: Number(t['@number']), sighting: String(t['@sighting_id'] ?? ''), thumbnail: t['@thumbnail'] }));
  const sightings = list(root.sightings?.sighting).map((s) => ({ id: String(s['@id']), tracks: list(s.track).map((t) => Number(t['@number'])) }));
  return { root, faces, tracks, sightings };
}

/** The XML's faces of one sighting (its tracks' faces). */
export function sightingFaces(xml: FaceLogXml, sightingId: string): XmlFace[] {
  const tracks = new Set(xml.tracks.filter((t) => t.sighting === sightingId).map((t) => t.number));
  return xml.faces.filter((f) => tracks.has(f.track));
}
