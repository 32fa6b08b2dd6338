// The original service's endpoints beyond the seed, called as its Python SDK calls them: raw
// multipart bodies as Python's requests writes them (form fields first, integers as text, bare
// file parts without a Content-Type), every response checked against the OpenAPI document, and
// every download saved as the SDK saves it, under the last segment of its URL.
//   FaceLogImage.apply   POST /face_log_image    success, message, results_image, sightings[].thumbnail
//   FaceDetect.apply     POST /face_detect       success, message, results_video
//   FaceDetectImage      POST /face_detect_image success, message, results_image
//   KamCheck.get_reference_image  POST /kamcheck_get_reference  frame_number, reference_image
// Also `blur`: the face regions of the outputs lose their detail (measured against a run without
// it); a reference picked from a clip makes a tamper check of that clip score 0; and the face
// log's history stays what the contract says.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { AUTH, PASSWORD, USER, api, startTestService, waitComplete, type TestService } from '../testkit/service.js';
import { facelogVideo } from '../testkit/facelog-fixtures/truth.js';
import { parseFaceLogXml, type FaceLogXml, type XmlFace } from '../testkit/facelog-fixtures/read-xml.js';
import { multipartBody, multipartType, type Part } from '../testkit/hostile-corpus/multipart.js';
import { readImageHeader } from '../lib/video/image-header.js';
import { execFileSync } from 'node:child_process';
import { testMedia } from '../testkit/media.js';
import { MAX_REFERENCE_CLIP_FRAMES } from '../lib/kamcheck/limits.js';
import cv from '../lib/video/opencv.js';
import { httpRequest, rawRequest, type RawResponse } from './helpers/raw-http.js';
import { describeBackends } from './helpers/backends.js';
import { runPython } from './helpers/python.js';

/** A face job of the test fixtures: a few seconds, longer on a loaded 2-core machine. */
const JOB_WAIT_MS = 180_000;
/** Python's requests draws a boundary of 32 hex digits per request. */
const boundary = () => randomBytes(16).toString('hex');

type Fields = Record<string, string | number>;

/**
 * A POST as the SDK's requests.post(url, files={field: open(path, 'rb')}, data=fields, auth=...)
 * sends it: form fields first, then each file part with its base name and no Content-Type.
 */
async function sdkPost(svc: TestService, endpoint: string, files: Record<string, string>, fields: Fields = {}): Promise<RawResponse> {
  const parts: Part[] = [
    ...Object.entries(fields).map(([name, value]) => ({ name, data: String(value) })),
    ...Object.entries(files).map(([name, file]) => ({ name, filename: path.basename(file), type: null, data: fs.readFileSync(file) })),
  ];
  const b = boundary();
  const body = multipartBody(parts, { boundary: b });
  const { host } = new URL(svc.url);
  const headers: [string, string | number][] = [
    ['Host', host],
    ['User-Agent', 'python-requests/2.31.0'],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Accept', '*/*'],
    ['Connection', 'close'],
    ['Content-Length', body.length],
    ['Content-Type', multipartType(b)],
    ['Authorization', AUTH],
  ];
  return rawRequest(svc.url, httpRequest('POST', endpoint, headers, body));
}

/** POSTs as the SDK does and polls GET <endpoint>/<job_id> until the task is complete. */
async function sdkRun(svc: TestService, endpoint: string, files: Record<string, string>, fields: Fields = {}): Promise<any> {
  const res = await sdkPost(svc, endpoint, files, fields);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  expect(res.body.task.analytic).to.equal(endpoint.slice(1));
  const task = await waitComplete(`${svc.url}${endpoint}/${res.body.task.job_id}`, JOB_WAIT_MS);
  expect(task.success, task.message).to.equal(true);
  return task;
}

/** A download saved as the SDK saves it: under url.split('/')[-1], fetched without credentials. */
async function sdkDownload(url: string, dir: string): Promise<{ name: string; file: string; body: Buffer }> {
  const name = url.split('/').pop()!;
  const res = await fetch(url);
  expect(res.status, url).to.equal(200);
  const body = Buffer.from(await res.arrayBuffer());
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return { name, file, body };
}

/** The name a download is saved under is the file's own: its extension last, no query string. */
function expectFileName(name: string, pattern: RegExp): void {
  expect(name).to.not.match(/[?&=]/);
  expect(name).to.match(pattern);
}

/** Variance of the Laplacian of a grey picture: how much fine detail it holds. */
function detail(gray: cv.Mat): number {
  const sd = gray.laplacian(cv.CV_64F, 3).meanStdDev().stddev.getDataAsArray()[0][0];
  return sd * sd;
}

/**
 * The inside of a face box in a picture, grey: 20% in from each side, so that the box's drawn
 * outline (2 px at these sizes) is not measured.
 */
function faceInside(picture: cv.Mat, f: Pick<XmlFace, 'x' | 'y' | 'width' | 'height'>): cv.Mat {
  const x = Math.max(0, Math.round(f.x + f.width * 0.2));
  const y = Math.max(0, Math.round(f.y + f.height * 0.2));
  const w = Math.min(picture.cols - x, Math.round(f.width * 0.6));
  const h = Math.min(picture.rows - y, Math.round(f.height * 0.6));
  return picture.getRegion(new cv.Rect(x, y, w, h)).bgrToGray();
}

/** Every frame of a video, BGR. */
function decodeFrames(file: string): cv.Mat[] {
  const cap = new cv.VideoCapture(file);
  const frames: cv.Mat[] = [];
  for (let f = cap.read(); f && !f.empty; f = cap.read()) frames.push(f);
  cap.release();
  return frames;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The four calls with Python's requests, as the SDK makes them (our own client, written after its
 * calls): POST with files and integer data, poll GET /<path>/<job_id>, download every link it reads
 * without credentials under url.split('/')[-1]. Prints what it got as JSON.
 */
const PYTHON_CLIENT = `
import json, os, time, requests

base = os.environ['APPLIANCE']
auth = (os.environ['USER_NAME'], os.environ['PASSWORD'])

def run(endpoint, files, data):
    task = requests.post(base + '/' + endpoint, auth=auth, files={k: open(v, 'rb') for k, v in files.items()}, data=data).json()['task']
    while not task['complete']:
        time.sleep(0.2)
        task = requests.get(base + '/' + endpoint + '/' + task['job_id'], auth=auth).json()['task']
    return task

def download(url):
    name = url.split('/')[-1]
    r = requests.get(url, stream=True)
    with open(name, 'wb') as f:
        for chunk in r.iter_content(chunk_size=1024):
            f.write(chunk)
    return [name, r.status_code]

out = {}
t = run('kamcheck_get_reference', {'video': os.environ['CLIP']}, {})
reference = download(t['reference_image'])
out['kamcheck_get_reference'] = {'success': t['success'], 'frame_number': t['frame_number'], 'saved': [reference]}
t = run('kamcheck', {'image': reference[0], 'video': os.environ['CLIP']}, {})
out['kamcheck'] = {'success': t['success'], 'probability': t['probability'], 'saved': []}
t = run('face_log_image', {'image': os.environ['STILL']}, {'min_size': 30, 'recognition': 0, 'compare_threshold': 0.75})
out['face_log_image'] = {'success': t['success'], 'saved': [download(t['results_image']), download(t['results_xml'])] + [download(s['thumbnail']) for s in t['sightings']]}
t = run('face_detect', {'video': os.environ['VIDEO']}, {'blur': 1, 'start_frame': 0, 'max_frames': 0, 'min_size': 30})
out['face_detect'] = {'success': t['success'], 'saved': [download(t['results_video']), download(t['results_xml'])]}
t = run('face_detect_image', {'image': os.environ['STILL']}, {'blur': 0, 'min_size': 30})
out['face_detect_image'] = {'success': t['success'], 'saved': [download(t['results_image']), download(t['results_xml'])]}
print(json.dumps(out))
`;

describeBackends("The original service's SDK calls", function (backend) {
  this.timeout(900_000);
  let svc: TestService;
  let downloads: string;
  const still = () => facelogVideo('still');
  const video = () => facelogVideo('single');
  /** Clips made for the reference picker (in `downloads`). */
  const clips = { passerBy: '', tooLong: '' };
  /** The frame of `clips.passerBy` without the passer-by: one of the 9 frames spread over its 20. */
  const EMPTY_FRAME = 7;

  before(async () => {
    svc = await startTestService({ ...(await backend.env()), WORKERS: '2' });
    downloads = fs.mkdtempSync(path.join(svc.dataDir, '..', 'sdk-downloads-'));
    const ffmpeg = (args: string[]) => execFileSync('ffmpeg', ['-v', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    const h264 = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart'];
    const { reference } = testMedia();
    // The camera's view with a red board walking across it in every frame but one.
    clips.passerBy = path.join(downloads, 'passer-by.mp4');
    ffmpeg(['-loop', '1', '-framerate', '25', '-i', reference, '-f', 'lavfi', '-i', 'color=c=red:s=40x80:r=25', '-filter_complex',
      `[0][1]overlay=x='10+n*14':y=80:enable='not(eq(n,${EMPTY_FRAME}))'`, '-frames:v', '20', ...h264, clips.passerBy]);
    clips.tooLong = path.join(downloads, 'too-long.mp4');
    ffmpeg(['-loop', '1', '-framerate', '25', '-i', reference, '-vf', 'scale=160:120', '-frames:v', String(MAX_REFERENCE_CLIP_FRAMES + 1), ...h264, clips.tooLong]);
  });
  after(async () => {
    await svc?.stop(); // removes its data folder
    if (downloads) fs.rmSync(downloads, { recursive: true, force: true });
  });

  /** The job ids of a history page. */
  const listed = async (p: string) => {
    const res = await api(`${svc.url}${p}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return (res.body.tasks as { job_id: string }[]).map((t) => t.job_id);
  };

  describe('bad input: 4xx at once, no job', () => {
    const cases: [string, string, () => Record<string, string>, Fields, number, string][] = [
      ['/face_log_image', 'no file', () => ({}), { min_size: 30 }, 400, 'missing_file'],
      ['/face_log_image', 'a video', () => ({ image: video().file }), {}, 415, 'unsupported_media'],
      ['/face_log_image', 'blur=7', () => ({ image: still().file }), { blur: 7 }, 400, 'invalid_parameter'],
      ['/face_detect', 'no file', () => ({}), { blur: 0, start_frame: 0, max_frames: 0, min_size: 30 }, 400, 'missing_file'],
      ['/face_detect', 'an image', () => ({ video: still().file }), { blur: 0 }, 415, 'unsupported_media'],
      ['/face_detect', 'blur=7', () => ({ video: video().file }), { blur: 7, start_frame: 0, max_frames: 0, min_size: 30 }, 400, 'invalid_parameter'],
      ['/face_detect_image', 'no file', () => ({}), { blur: 1 }, 400, 'missing_file'],
      ['/face_detect_image', 'a video', () => ({ image: video().file }), { blur: 1 }, 415, 'unsupported_media'],
      ['/face_detect_image', 'blur=7', () => ({ image: still().file }), { blur: 7, min_size: 30 }, 400, 'invalid_parameter'],
      ['/face_log', 'blur=7', () => ({ video: video().file }), { blur: 7 }, 400, 'invalid_parameter'],
      ['/face_log', 'blur=yes', () => ({ video: video().file }), { blur: 'yes' }, 400, 'invalid_parameter'],
      ['/kamcheck_get_reference', 'no file', () => ({}), {}, 400, 'missing_file'],
      ['/kamcheck_get_reference', 'an image', () => ({ video: testMedia().reference }), {}, 415, 'unsupported_media'],
      ['/kamcheck_get_reference', `a clip of ${MAX_REFERENCE_CLIP_FRAMES + 1} frames`, () => ({ video: clips.tooLong }), {}, 422, 'too_many_frames'],
    ];
    for (const [endpoint, name, files, fields, status, code] of cases) {
      it(`${endpoint}, ${name}: ${status} ${code}`, async () => {
        const res = await sdkPost(svc, endpoint, files(), fields);
        expect(res.status, JSON.stringify(res.body)).to.equal(status);
        expect(res.body.error.code).to.equal(code);
        expect(res.body.message).to.equal(res.body.error.message);
        if (code === 'invalid_parameter') expect(res.body.message).to.contain('"blur"');
      });
    }

    it('created no job', async () => {
      for (const p of ['/face_detect', '/face_log_image', '/face_detect_image', '/kamcheck_get_reference']) expect(await listed(p), p).to.deep.equal([]);
    });
  });

  describe('FaceLogImage.apply: POST /face_log_image', () => {
    let task: any;
    before(async () => {
      // The SDK's own fields beside min_size, which this service does not use: ignored.
      task = await sdkRun(svc, '/face_log_image', { image: still().file }, { min_size: 30, recognition: 1, compare_threshold: 0.6 });
    });

    it("answers the face log's task plus results_image: one sighting per face, with thumbnails", async () => {
      const { truth } = still();
      expect(task.message).to.match(/^Found \d+ sightings, \d+ tracks, \d+ faces$/);
      expect(task.frames).to.equal(1);
      expect(task.number_of_sightings).to.equal(truth.appearances.length);
      for (const key of ['results_image', 'results_video', 'results_xml']) expect(task[key], key).to.be.a('string');
      for (const s of task.sightings) {
        const saved = await sdkDownload(s.thumbnail, downloads);
        expectFileName(saved.name, new RegExp(`^${task.job_id}_sighting_\\d+\\.jpg$`));
        expect((await readImageHeader(saved.file))?.format).to.equal('jpeg');
      }
    });

    it("results_image: a JPEG of the upload's size, the overlay's frame, every face's box drawn on it", async () => {
      const image = await sdkDownload(task.results_image, downloads);
      expectFileName(image.name, new RegExp(`^face_log_${task.job_id}\\.jpg$`));
      const header = await readImageHeader(image.file);
      expect([header?.format, header?.width, header?.height]).to.deep.equal(['jpeg', still().truth.width, still().truth.height]);
      const picture = cv.imdecode(image.body);
      // The overlay video's one frame, drawn the same way (both lossy: a few grey levels apart).
      const overlay = await sdkDownload(task.results_video, downloads);
      expectFileName(overlay.name, new RegExp(`^face_log_${task.job_id}\\.mp4$`));
      const [frame] = decodeFrames(overlay.file);
      expect(picture.absdiff(frame).bgrToGray().mean().w).to.be.below(4);
      // Each face's box is drawn: its top edge is the track's colour, not the upload's pixels.
      const xmlFile = await sdkDownload(task.results_xml, downloads);
      expectFileName(xmlFile.name, new RegExp(`^face_log_${task.job_id}\\.xml$`));
      const xml = parseFaceLogXml(xmlFile.body.toString('utf8'));
      const upload = cv.imread(still().file);
      expect(xml.faces.length).to.be.at.least(still().truth.appearances.length);
      for (const f of xml.faces) {
        const edge = new cv.Rect(f.x, f.y, f.width, 2);
        const changed = picture.getRegion(edge).absdiff(upload.getRegion(edge)).bgrToGray().mean().w;
        expect(changed, `face at ${f.x},${f.y}`).to.be.above(25);
      }
    });

    it("is listed at /face_log_image and in the face log's history; polled at its own path", async () => {
      expect(await listed('/face_log_image/1/10')).to.deep.equal([task.job_id]);
      expect(await listed('/face_log_image')).to.deep.equal([task.job_id]);
      expect(await listed('/face_detect')).to.include(task.job_id);
      expect(await listed('/face_log/1/10')).to.include(task.job_id);
      expect(await listed('/face_detect_image/1/10')).to.not.include(task.job_id);
      expect((await api(`${svc.url}/face_log/${task.job_id}`)).status).to.equal(404);
    });
  });

  describe('FaceDetect.apply: POST /face_detect, with and without blur', () => {
    let plain: any;
    let blurred: any;
    let xml: FaceLogXml;
    before(async () => {
      // As the SDK sends them: blur, start_frame, max_frames, min_size, all integers.
      const fields = { start_frame: 0, max_frames: 0, min_size: 30, track_thumbnails: 'True' };
      plain = await sdkRun(svc, '/face_detect', { video: video().file }, { blur: 0, ...fields });
      blurred = await sdkRun(svc, '/face_detect', { video: video().file }, { blur: 1, ...fields });
      xml = parseFaceLogXml((await sdkDownload(blurred.results_xml, downloads)).body.toString('utf8'));
    });

    it('answers results_video and results_xml, saved under their own names; no results_image', async () => {
      const { truth } = video();
      for (const task of [plain, blurred]) {
        expect(task.message).to.match(/^Found \d+ sightings, \d+ tracks, \d+ faces$/);
        expect(task.frames_processed).to.equal(truth.frame_count);
        expect(task).to.not.have.property('results_image');
        const overlay = await sdkDownload(task.results_video, downloads);
        expectFileName(overlay.name, new RegExp(`^face_log_${task.job_id}\\.mp4$`));
        expect(decodeFrames(overlay.file)).to.have.length(truth.frame_count);
        expectFileName((await sdkDownload(task.results_xml, downloads)).name, new RegExp(`^face_log_${task.job_id}\\.xml$`));
      }
      // Blurring changes the pictures, not what was found.
      const plainXml = parseFaceLogXml((await sdkDownload(plain.results_xml, downloads)).body.toString('utf8'));
      expect(xml.faces.length).to.be.greaterThan(20);
      expect(xml.faces.length).to.equal(plainXml.faces.length);
    });

    it('blur=1: the faces of the overlay lose their detail, the rest of the picture keeps it', async () => {
      const plainFrames = decodeFrames((await sdkDownload(plain.results_video, downloads)).file);
      const blurredFrames = decodeFrames((await sdkDownload(blurred.results_video, downloads)).file);
      const faces = xml.faces.filter((f) => f.width >= 60);
      expect(faces.length, 'frames with a face of 60 px or more').to.be.greaterThan(5);
      const ratios = faces.map((f) => detail(faceInside(blurredFrames[f.frame], f)) / detail(faceInside(plainFrames[f.frame], f)));
      // Measured: the inside of a 60-185 px face keeps 1-5% of its Laplacian variance (what is left
      // is mostly the encoder's block noise on a smooth area).
      expect(Math.max(...ratios), JSON.stringify(ratios.map((r) => r.toFixed(3)))).to.be.below(0.1);
      // Away from the faces the two overlays are the same video.
      const corner = new cv.Rect(0, 0, 120, 120);
      for (const f of faces) {
        if (f.x < 200 && f.y < 200) continue;
        expect(blurredFrames[f.frame].getRegion(corner).absdiff(plainFrames[f.frame].getRegion(corner)).bgrToGray().mean().w).to.be.below(2);
      }
    });

    it('blur=1: track thumbnails are blurred, sighting thumbnails keep the face', async () => {
      const thumbnails = async (task: any) => {
        const taskXml = parseFaceLogXml((await sdkDownload(task.results_xml, downloads)).body.toString('utf8'));
        const tracks = [];
        for (const t of taskXml.tracks.filter((tr) => tr.thumbnail)) {
          const saved = await sdkDownload(new URL(t.thumbnail!, task.results_xml).toString(), downloads);
          expectFileName(saved.name, new RegExp(`^${task.job_id}_track_${t.number}\\.jpg$`));
          tracks.push(detail(cv.imdecode(saved.body).bgrToGray()));
        }
        const sightings = [];
        for (const s of task.sightings) sightings.push(detail(cv.imdecode((await sdkDownload(s.thumbnail, downloads)).body).bgrToGray()));
        return { tracks, sightings };
      };
      const a = await thumbnails(plain);
      const b = await thumbnails(blurred);
      expect(a.tracks.length).to.be.greaterThan(0);
      expect(b.tracks).to.have.length(a.tracks.length);
      expect(b.sightings).to.have.length(a.sightings.length).and.not.be.empty;
      b.tracks.forEach((d, i) => expect(d / a.tracks[i], `track thumbnail ${i}`).to.be.below(0.1));
      b.sightings.forEach((d, i) => expect(d / a.sightings[i], `sighting thumbnail ${i}`).to.be.within(0.8, 1.25));
    });

    it("is polled at /face_detect/<job_id> and listed at /face_detect_image; the face log's history is unchanged", async () => {
      expect((await api(`${svc.url}/face_detect/${plain.job_id}`)).body.task.job_id).to.equal(plain.job_id);
      const detections = await listed('/face_detect_image/1/10');
      expect(detections.slice(0, 2)).to.deep.equal([blurred.job_id, plain.job_id]);
      for (const history of ['/face_detect', '/face_detect/1/50']) {
        const faceLogs = await listed(history);
        for (const id of [plain.job_id, blurred.job_id]) expect(faceLogs, history).to.not.include(id);
      }
      expect((await api(`${svc.url}/face_log/${plain.job_id}`)).status).to.equal(404);
    });
  });

  describe('FaceDetectImage.apply: POST /face_detect_image', () => {
    let plain: any;
    let blurred: any;
    before(async () => {
      plain = await sdkRun(svc, '/face_detect_image', { image: still().file }, { blur: 'False', min_size: 30 });
      blurred = await sdkRun(svc, '/face_detect_image', { image: still().file }, { blur: 1, min_size: 30 });
    });

    it('answers results_image and results_xml, no overlay video', async () => {
      for (const task of [plain, blurred]) {
        expect(task).to.not.have.property('results_video');
        const image = await sdkDownload(task.results_image, downloads);
        expectFileName(image.name, new RegExp(`^face_log_${task.job_id}\\.jpg$`));
        const header = await readImageHeader(image.file);
        expect([header?.width, header?.height]).to.deep.equal([still().truth.width, still().truth.height]);
        expectFileName((await sdkDownload(task.results_xml, downloads)).name, new RegExp(`^face_log_${task.job_id}\\.xml$`));
      }
      expect(fs.readdirSync(path.join(svc.dataDir, 'results', plain.job_id)).filter((f) => f.endsWith('.mp4'))).to.deep.equal([]);
    });

    it('blur=1: every face of the results image has lost its detail', async () => {
      const xml = parseFaceLogXml((await sdkDownload(blurred.results_xml, downloads)).body.toString('utf8'));
      expect(xml.faces.length).to.be.at.least(still().truth.appearances.length);
      const a = cv.imdecode((await sdkDownload(plain.results_image, downloads)).body);
      const b = cv.imdecode((await sdkDownload(blurred.results_image, downloads)).body);
      const ratios = xml.faces.map((f) => detail(faceInside(b, f)) / detail(faceInside(a, f)));
      expect(Math.max(...ratios), JSON.stringify(ratios.map((r) => r.toFixed(3)))).to.be.below(0.1);
      expect(mean(ratios)).to.be.below(0.05);
    });

    it('every face detection, of a video or an image, is listed at /face_detect_image; each is polled at its own path', async () => {
      const ids = await listed('/face_detect_image');
      expect(ids.slice(0, 2)).to.deep.equal([blurred.job_id, plain.job_id]);
      expect(ids).to.have.length(4);
      expect((await api(`${svc.url}/face_detect_image/${plain.job_id}`)).body.task.analytic).to.equal('face_detect_image');
      expect((await api(`${svc.url}/face_detect/${plain.job_id}`)).status).to.equal(404);
    });
  });

  describe('KamCheck.get_reference_image: POST /kamcheck_get_reference', () => {
    it("answers the clip's quietest frame: its number in the clip and a JPEG of it, saved under its own name", async () => {
      const task = await sdkRun(svc, '/kamcheck_get_reference', { video: clips.passerBy });
      expect(task.frame_number).to.equal(EMPTY_FRAME);
      expect(task.message).to.equal(`Frame ${EMPTY_FRAME} of 20 is the quietest`);
      const saved = await sdkDownload(task.reference_image, downloads);
      expectFileName(saved.name, new RegExp(`^kamcheck_reference_${task.job_id}\\.jpg$`));
      const header = await readImageHeader(saved.file);
      expect([header?.format, header?.width, header?.height]).to.deep.equal(['jpeg', 320, 240]);
      // The picture is that frame of the clip, in the clip's own numbering: nearest of all 20.
      const frames = decodeFrames(clips.passerBy);
      const picture = cv.imdecode(saved.body);
      const distance = frames.map((f) => picture.absdiff(f).bgrToGray().mean().w);
      expect(distance.indexOf(Math.min(...distance)), JSON.stringify(distance.map((d) => d.toFixed(2)))).to.equal(EMPTY_FRAME);
      expect(distance[EMPTY_FRAME]).to.be.below(2);
    });

    it('a reference picked from a clip is the image of a tamper check of that clip that scores 0', async () => {
      const { clip } = testMedia();
      const task = await sdkRun(svc, '/kamcheck_get_reference', { video: clip });
      expect(task.frame_number).to.be.within(0, 19);
      const saved = await sdkDownload(task.reference_image, downloads);
      expectFileName(saved.name, new RegExp(`^kamcheck_reference_${task.job_id}\\.jpg$`));
      // KamCheck.apply(video, image) with the downloaded file, as the SDK sends it.
      const check = await sdkRun(svc, '/kamcheck', { video: clip, image: saved.file });
      expect(check.probability, JSON.stringify(check.causes)).to.equal(0);
      // The same clip against a board over 60% of the view: the reference is not just anything that scores 0.
      const covered = await sdkRun(svc, '/kamcheck', { video: testMedia().clipCovered, image: saved.file });
      expect(covered.probability).to.be.at.least(50);
    });

    it('is polled at its own path and listed at /kamcheck_get_reference, not in the tamper checks', async () => {
      const picks = await listed('/kamcheck_get_reference');
      expect(picks).to.have.length(2);
      expect(await listed('/kamcheck_get_reference/1/1')).to.deep.equal(picks.slice(0, 1));
      expect(await listed('/kamcheck_get_reference/2/1')).to.deep.equal(picks.slice(1, 2));
      const checks = await listed('/kamcheck');
      for (const id of picks) expect(checks).to.not.include(id);
      const res = await api(`${svc.url}/kamcheck_get_reference/${picks[0]}`);
      expect(res.body.task.analytic).to.equal('kamcheck_get_reference');
      expect((await api(`${svc.url}/kamcheck/${picks[0]}`)).status).to.equal(404);
    });
  });

  describe('POST /face_log takes blur too', () => {
    it('True/False as the face log\'s other booleans: the faces of the overlay lose their detail', async () => {
      const overlay = async (blur: string) => {
        const task = await sdkRun(svc, '/face_log', { image: still().file }, { blur });
        const xml = parseFaceLogXml((await sdkDownload(task.results_xml, downloads)).body.toString('utf8'));
        return { xml, frame: decodeFrames((await sdkDownload(task.results_video, downloads)).file)[0] };
      };
      const plain = await overlay('False');
      const blurred = await overlay('True');
      expect(blurred.xml.faces).to.have.length(plain.xml.faces.length).and.not.be.empty;
      const ratios = blurred.xml.faces.map((f) => detail(faceInside(blurred.frame, f)) / detail(faceInside(plain.frame, f)));
      expect(Math.max(...ratios), JSON.stringify(ratios.map((r) => r.toFixed(3)))).to.be.below(0.1);
    });
  });

  describe("Python's requests, as the SDK makes the calls", () => {
    it('every call succeeds and every download is saved under its own file name', async () => {
      const dir = fs.mkdtempSync(path.join(downloads, 'python-'));
      const run = await runPython(PYTHON_CLIENT, {
        APPLIANCE: svc.url, USER_NAME: USER, PASSWORD, CLIP: testMedia().clip, STILL: path.resolve(still().file), VIDEO: path.resolve(video().file),
      }, dir, JOB_WAIT_MS);
      expect(run.status, run.stderr).to.equal(0);
      const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
      expect(Object.keys(out)).to.have.members(['kamcheck_get_reference', 'kamcheck', 'face_log_image', 'face_detect', 'face_detect_image']);
      for (const [call, result] of Object.entries(out) as [string, { success: boolean; saved: [string, number][] }][]) {
        expect(result.success, call).to.equal(true);
        for (const [name, status] of result.saved) {
          expect(status, `${call}: ${name}`).to.equal(200);
          expectFileName(name, /^[\w-]+\.(jpg|mp4|xml)$/);
          expect(fs.statSync(path.join(dir, name)).size, name).to.be.greaterThan(0);
        }
      }
      expect(out.kamcheck.probability).to.equal(0);
      expect(out.face_log_image.saved.length).to.be.greaterThan(2);
      expect(out.face_detect.saved.map((s: [string]) => path.extname(s[0]))).to.deep.equal(['.mp4', '.xml']);
      expect(out.face_detect_image.saved.map((s: [string]) => path.extname(s[0]))).to.deep.equal(['.jpg', '.xml']);
    });
  });
});
