// The manifest of a generated tamper-check fixture set: what each case is, so tests and the
// accuracy benchmark can judge the analytic against the label.

export const TAMPER_KINDS = [
  'blur',
  'moved',
  'masked_partial_flat',
  'masked_partial_textured',
  'masked_full',
  'overexposed',
  'underexposed',
  'frozen',
  'black',
  'smeared_partial',
  'smeared_full',
  'spray_mist',
  'fogged_window',
  'slight_defocus',
  'moved_slight',
  'night_defocus',
  'night_masked',
] as const;

export const BENIGN_KINDS = [
  'people',
  'lighting_gain',
  'gamma',
  'colour_cast',
  'noise',
  'heavy_compression',
  'shadows',
  'rain',
  'none',
  'dusk',
  'haze',
  'night_low_light',
  'night_dark',
  'ir_switch',
  'headlights',
  'lamps_on',
  'night_precipitation',
] as const;

export type TamperKind = (typeof TAMPER_KINDS)[number];
export type BenignKind = (typeof BENIGN_KINDS)[number];
export type CaseKind = TamperKind | BenignKind;

export interface FixtureCase {
  /** Folder name under the set directory; holds reference.png and clip.mp4. */
  id: string;
  label: 'tamper' | 'benign';
  kind: CaseKind;
  width: number;
  height: number;
  /** Frames in clip.mp4. */
  frames: number;
  /** Where the picture comes from, e.g. `vtest@412/530` (reference frame / clip start) or `building.jpg`. */
  scene: string;
  /** x264 constant rate factor the clip was encoded with. */
  crf: number;
  /** The random parameters of the kind (blur sigma, gain, shift ...), for diagnosis. */
  params: Record<string, number | string>;
}

export interface FixtureManifest {
  set: 'test' | 'bench';
  seed: number;
  cases: FixtureCase[];
}

export const DEFAULT_FIXTURE_DIR = 'test/fixtures/generated/kamcheck';
export const DEFAULT_BENCH_FIXTURE_DIR = 'test/fixtures/generated/kamcheck-bench';
