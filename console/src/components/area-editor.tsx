// Ignore areas drawn on a camera's reference picture: the areas as hatched red polygons over the
// picture, a new one drawn point by point (a click, or the arrow keys and Enter), closed with
// "Finish area" or on its first point, and each one listed with a Remove button. It edits a list
// the page holds; saving it is the page's (PUT /cameras/<camera> with ignore_areas). `readOnly`
// shows the areas alone, for a user whose role may not change them.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { IgnoreArea } from '../types.js';

/** The API's limits (openapi: CameraSourceSettings.ignore_areas, IgnoreArea). */
export const MAX_AREAS = 16;
const MIN_POINTS = 3;
const MAX_POINTS = 64;
/** Arrow keys move the drawing cross by 1% of the picture, with Shift by 5%. */
const KEY_STEP = 0.01;
const KEY_STEP_FAST = 0.05;
/** Points are kept to 4 decimals: a fifth of a pixel of a 1920-wide picture. */
const DECIMALS = 10_000;

type Point = [number, number];

const fraction = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * DECIMALS) / DECIMALS;
const pointsAttr = (points: Point[]) => points.map(([x, y]) => `${x},${y}`).join(' ');
const at = ([x, y]: Point) => ({ left: `${x * 100}%`, top: `${y * 100}%` });

/** The share of the picture a polygon covers (shoelace formula), 0 to 1. */
export function areaShare(points: IgnoreArea): number {
  let twice = 0;
  for (let i = 0; i < points.length; i++) {
    const [x1, y1] = points[i];
    const [x2, y2] = points[(i + 1) % points.length];
    twice += x1 * y2 - x2 * y1;
  }
  return Math.abs(twice) / 2;
}

function centre(points: IgnoreArea): Point {
  const n = points.length || 1;
  return [points.reduce((s, p) => s + p[0], 0) / n, points.reduce((s, p) => s + p[1], 0) / n];
}

export function AreaEditor({
  image,
  camera,
  areas,
  onChange = () => {},
  readOnly = false,
}: {
  image: string | null | undefined;
  camera: string;
  areas: IgnoreArea[];
  onChange?: (areas: IgnoreArea[]) => void;
  readOnly?: boolean;
}) {
  const [drawing, setDrawing] = useState<Point[] | null>(null);
  const [cursor, setCursor] = useState<Point>([0.5, 0.5]);
  const [highlight, setHighlight] = useState<number | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const imageRef = useRef<HTMLImageElement>(null);
  const canvasRef = useRef<HTMLDivElement>(null);
  const shown = !!image && image !== failed;

  useEffect(() => {
    if (drawing && drawing.length === 0) canvasRef.current?.focus({ preventScroll: true });
  }, [drawing !== null]);

  const addPoint = (p: Point) => setDrawing((d) => (d && d.length < MAX_POINTS ? [...d, [fraction(p[0]), fraction(p[1])]] : d));
  const finish = () => {
    if (!drawing || drawing.length < MIN_POINTS) return;
    onChange([...areas, drawing]);
    setDrawing(null);
  };
  const cancel = () => setDrawing(null);

  const onPictureClick = (e: MouseEvent) => {
    const img = imageRef.current;
    if (!drawing || !img) return;
    // The picture's rendered box: the click as fractions of its width and height.
    const box = img.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return;
    addPoint([(e.clientX - box.left) / box.width, (e.clientY - box.top) / box.height]);
  };

  const onKey = (e: KeyboardEvent) => {
    if (!drawing) return;
    const step = e.shiftKey ? KEY_STEP_FAST : KEY_STEP;
    const move: Record<string, Point> = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (move[e.key]) {
      setCursor(([x, y]) => [fraction(x + move[e.key][0]), fraction(y + move[e.key][1])]);
    } else if (e.key === 'Enter' || e.key === ' ') {
      addPoint(cursor);
    } else if (e.key === 'Backspace') {
      setDrawing((d) => d && d.slice(0, -1));
    } else if (e.key === 'Escape') {
      cancel();
    } else {
      return;
    }
    e.preventDefault();
  };

  const points = drawing ?? [];
  return (
    <div class="area-editor">
      {shown ? (
        <div
          ref={canvasRef}
          class={drawing ? 'area-canvas drawing' : 'area-canvas'}
          onClick={onPictureClick}
          onKeyDown={onKey}
          tabIndex={drawing ? 0 : undefined}
          role={drawing ? 'application' : undefined}
          aria-label={drawing ? `Reference picture of ${camera}: click each corner of the new area, or move the cross with the arrow keys and add a point with Enter` : undefined}
          aria-describedby={drawing ? 'area-drawing-status' : undefined}
        >
          <img ref={imageRef} src={image} alt={`Reference picture of ${camera} with its ignore areas`} draggable={false} onError={() => setFailed(image)} />
          <svg class="area-overlay" viewBox="0 0 1 1" preserveAspectRatio="none" aria-hidden="true">
            <defs>
              <pattern id="ignore-hatch" patternUnits="userSpaceOnUse" width="0.03" height="0.03" patternTransform="rotate(45)">
                <rect class="hatch-line" width="0.009" height="0.03" />
              </pattern>
            </defs>
            {areas.map((a, i) => (
              <g key={i} class={highlight === i ? 'area highlighted' : 'area'}>
                <polygon class="area-fill" points={pointsAttr(a)} />
                <polygon class="area-hatch" fill="url(#ignore-hatch)" points={pointsAttr(a)} />
              </g>
            ))}
            {points.length > 0 && <polygon class={points.length >= MIN_POINTS ? 'area-draft closable' : 'area-draft'} points={pointsAttr(points)} />}
          </svg>
          {areas.map((a, i) => (
            <span key={i} class="area-label" style={at(centre(a))} aria-hidden="true">
              {i + 1}
            </span>
          ))}
          {points.map((p, i) =>
            i === 0 && points.length >= MIN_POINTS ? (
              <button
                key={i}
                type="button"
                class="area-point first"
                style={at(p)}
                aria-label="Close the area at its first point"
                title="Close the area here"
                onClick={(e) => {
                  e.stopPropagation();
                  finish();
                }}
              />
            ) : (
              <span key={i} class={i === 0 ? 'area-point first' : 'area-point'} style={at(p)} aria-hidden="true" />
            ),
          )}
          {drawing && <span class="area-cursor" style={at(cursor)} aria-hidden="true" />}
        </div>
      ) : (
        <div class="picture-none area-none">
          {image
            ? 'The reference picture cannot be loaded: the areas are listed below.'
            : readOnly
              ? 'No reference picture yet.'
              : 'No reference picture yet. Areas are drawn on it: set a reference first (Actions), then draw them here.'}
        </div>
      )}

      {readOnly ? null : drawing ? (
        <div class="area-drawing">
          <p id="area-drawing-status" class="hint" aria-live="polite">
            {points.length === 0
              ? 'Click the picture at each corner of the area (keyboard: arrow keys, then Enter).'
              : `${points.length} point${points.length === 1 ? '' : 's'}. ${points.length < MIN_POINTS ? `At least ${MIN_POINTS} make an area.` : 'Finish the area, or click its first point.'}`}
          </p>
          <div class="button-row">
            <button type="button" class="primary" disabled={points.length < MIN_POINTS} onClick={finish}>
              Finish area
            </button>
            <button type="button" disabled={points.length === 0} onClick={() => setDrawing((d) => d && d.slice(0, -1))}>
              Remove last point
            </button>
            <button type="button" onClick={cancel}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div class="button-row">
          <button
            type="button"
            disabled={!shown || areas.length >= MAX_AREAS}
            title={areas.length >= MAX_AREAS ? `At most ${MAX_AREAS} areas` : undefined}
            onClick={() => {
              setCursor([0.5, 0.5]);
              setDrawing([]);
            }}
          >
            Draw a new area
          </button>
        </div>
      )}

      {areas.length === 0 ? (
        <p class="muted area-empty">No ignore area: every part of the picture counts.</p>
      ) : (
        <ol class="area-list" aria-label="Ignore areas">
          {areas.map((a, i) => (
            <li key={i} class={highlight === i ? 'highlighted' : undefined} onMouseEnter={() => setHighlight(i)} onMouseLeave={() => setHighlight(null)}>
              <span class="area-swatch" aria-hidden="true">
                {i + 1}
              </span>
              <span>
                Area {i + 1} <span class="muted">· {a.length} points · about {Math.max(1, Math.round(areaShare(a) * 100))}% of the picture</span>
              </span>
              {!readOnly && (
                <button
                  type="button"
                  class="danger small"
                  aria-label={`Remove area ${i + 1}`}
                  onFocus={() => setHighlight(i)}
                  onBlur={() => setHighlight(null)}
                  onClick={() => {
                    setHighlight(null);
                    onChange(areas.filter((_, j) => j !== i));
                  }}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
