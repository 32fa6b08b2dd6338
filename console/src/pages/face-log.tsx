// A face log to review: the overlay video in the page, every sighting as a card (thumbnail, time
// in the video, frames, confidence, gender when classified), a timeline of the sightings along
// the video; a card or a mark on the timeline seeks the video to the sighting. Links to the XML
// and every file. A face log of an image shows its results image instead of a video.
import { JobProgressBar } from '../components/progress.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiGet } from '../api.js';
import { ErrorNotice, Loading } from '../components/notice.js';
import { TaskStatus } from '../components/state.js';
import { clock, frameRate, percent, when } from '../format.js';
import { usePoll } from '../poll.js';
import { href } from '../route.js';
import type { FaceLogTask, Sighting } from '../types.js';

export function FaceLogPage({ analytic, jobId }: { analytic: string; jobId: string }) {
  const polled = usePoll(
    () => apiGet<{ task: FaceLogTask }>(`/${analytic}/${encodeURIComponent(jobId)}`).then((r) => r.task),
    2000,
    `${analytic}:${jobId}`,
    (task) => task.complete,
  );
  const t = polled.data;
  return (
    <main id="main" tabIndex={-1} class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.jobs('face_log')}>Face logs</a> › <span>{t?.input_video ?? jobId}</span>
      </nav>
      <h1>Face log{t?.input_video ? `: ${t.input_video}` : ''}</h1>
      {polled.error && !t && <ErrorNotice error={polled.error} title="Cannot load the face log:" />}
      {!t && !polled.error && <Loading what="the face log" />}
      {t && <FaceLogReview task={t} />}
    </main>
  );
}

export function FaceLogReview({ task: t }: { task: FaceLogTask }) {
  const video = useRef<HTMLVideoElement>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [playhead, setPlayhead] = useState(0);
  const fps = frameRate(t.resolution);
  const first = t.start_frame ?? 0;
  const frames = Math.max(1, t.frames_processed ?? t.frames ?? 1);
  const sightings = t.sightings ?? [];
  /** The overlay video starts at the first processed frame. */
  const seconds = (frame: number) => Math.max(0, (frame - first) / fps);

  useEffect(() => {
    const v = video.current;
    if (!v) return;
    const moved = () => setPlayhead(v.currentTime);
    v.addEventListener('timeupdate', moved);
    v.addEventListener('seeked', moved);
    return () => {
      v.removeEventListener('timeupdate', moved);
      v.removeEventListener('seeked', moved);
    };
  }, [t.results_video]);

  const seek = (s: Sighting) => {
    setSelected(s.sighting_id);
    const v = video.current;
    // A little into the first frame, so the frame shown is the sighting's own.
    if (v) v.currentTime = seconds(s.start_frame) + 0.5 / fps;
  };

  if (!t.complete) {
    return (
      <section class="card">
        <TaskStatus complete={false} message={t.message} />
        <p class="message">{t.message}</p>
        {t.progress && <JobProgressBar progress={t.progress} />}
      </section>
    );
  }
  if (!t.success) {
    return (
      <section class="card">
        <TaskStatus complete success={false} />
        <div class="notice notice-error" role="alert">
          {t.error?.message ?? t.message} {t.error && <span class="muted">({t.error.code})</span>}
        </div>
      </section>
    );
  }
  const lanes = laneOf(sightings);
  const laneCount = Math.max(1, ...[...lanes.values()].map((l) => l + 1));
  return (
    <div class="review" data-job={t.job_id}>
      <section class="card review-media" aria-label="Overlay">
        {t.results_video ? (
          <video ref={video} class="overlay-video" src={t.results_video} controls preload="auto" muted playsInline />
        ) : t.results_image ? (
          <img class="overlay-image" src={t.results_image} alt={`Faces found in ${t.input_video ?? 'the image'}`} />
        ) : null}
        {t.results_video && (
          <div class="timeline" aria-label="Sightings along the video">
            <div class="timeline-track" style={{ height: `${laneCount * 18 + 8}px` }}>
              {sightings.map((s, i) => (
                <button
                  type="button"
                  key={s.sighting_id}
                  class={selected === s.sighting_id ? 'mark selected' : 'mark'}
                  style={{
                    left: `${((s.start_frame - first) / frames) * 100}%`,
                    width: `max(6px, ${((s.end_frame - s.start_frame + 1) / frames) * 100}%)`,
                    top: `${4 + (lanes.get(s.sighting_id) ?? 0) * 18}px`,
                  }}
                  title={`Sighting ${i + 1}: ${clock(seconds(s.start_frame))}–${clock(seconds(s.end_frame))}`}
                  aria-label={`Sighting ${i + 1} at ${clock(seconds(s.start_frame))}`}
                  onClick={() => seek(s)}
                />
              ))}
              <div class="playhead" style={{ left: `${Math.min(100, (playhead / (frames / fps)) * 100)}%` }} aria-hidden="true" />
            </div>
            <div class="timeline-scale" aria-hidden="true">
              <span>{clock(0)}</span>
              <span>{clock(frames / fps)}</span>
            </div>
          </div>
        )}
        <p class="downloads">
          {t.results_video && (
            <a href={t.results_video} download>
              Overlay video (MP4)
            </a>
          )}
          {t.results_image && (
            <a href={t.results_image} download>
              Results image
            </a>
          )}
          {t.results_xml && (
            <a href={t.results_xml} download>
              Every face (XML)
            </a>
          )}
        </p>
      </section>
      <div class="review-side">
      <section class="card" aria-labelledby="facts-title">
        <h2 id="facts-title" class="visually-hidden">
          About this face log
        </h2>
        <dl class="facts facts-inline">
          <dt>Result</dt>
          <dd>{t.message}</dd>
          <dt>Input</dt>
          <dd>
            {t.input_video} · {t.resolution}
          </dd>
          <dt>Frames</dt>
          <dd>
            {t.frames_processed} of {t.frames}
            {first > 0 ? `, from frame ${first}` : ''}
          </dd>
          <dt>Submitted</dt>
          <dd>{when(t.start_time)}</dd>
          <dt>Finished</dt>
          <dd>{when(t.finish_time)}</dd>
        </dl>
      </section>
      <section aria-labelledby="sightings-title">
        <h2 id="sightings-title">
          {sightings.length} sighting{sightings.length === 1 ? '' : 's'}
        </h2>
        {sightings.length === 0 ? (
          <p class="muted">Nobody was seen.</p>
        ) : (
          <ol class="sightings">
            {sightings.map((s, i) => (
              <li key={s.sighting_id}>
                <button
                  type="button"
                  class={selected === s.sighting_id ? 'sighting selected' : 'sighting'}
                  data-sighting={s.sighting_id}
                  onClick={() => seek(s)}
                  aria-label={`Sighting ${i + 1}: play from ${clock(seconds(s.start_frame))}`}
                >
                  {s.thumbnail ? <img src={s.thumbnail} alt="" /> : <span class="picture-none">No thumbnail</span>}
                  <span class="sighting-text">
                    <strong>
                      #{i + 1} · {clock(seconds(s.start_frame))}–{clock(seconds(s.end_frame))}
                    </strong>
                    <span>
                      frames {s.start_frame}–{s.end_frame} ({s.frames} with a face)
                    </span>
                    {s.confidence !== undefined && <span>confidence {percent(s.confidence * 100)}</span>}
                    {s.gender && <span>{`${s.gender}${s.gender_confidence !== undefined && s.gender_confidence >= 0 ? ` (${percent(s.gender_confidence * 100)})` : ''}`}</span>}
                  </span>
                </button>
                {s.thumbnail && (
                  <a class="thumb-link" href={s.thumbnail} target="_blank" rel="noopener">
                    Thumbnail file
                  </a>
                )}
              </li>
            ))}
          </ol>
        )}
      </section>
      </div>
    </div>
  );
}

/** Timeline rows: each sighting on the first row where it overlaps none before it. */
function laneOf(sightings: Sighting[]): Map<string, number> {
  const ends: number[] = [];
  const lanes = new Map<string, number>();
  for (const s of [...sightings].sort((a, b) => a.start_frame - b.start_frame)) {
    let lane = ends.findIndex((end) => end < s.start_frame);
    if (lane < 0) lane = ends.length;
    ends[lane] = s.end_frame;
    lanes.set(s.sighting_id, lane);
  }
  return lanes;
}
