// The OpenAPI document: served as it is in the repository, a valid OpenAPI 3.1 document, covering
// every route of the app and the contract's names, and strict enough that the response check
// every test request goes through (testkit/openapi-check.ts) catches drift.
import fs from 'node:fs';
import type Router from '@koa/router';
import { expect } from 'chai';
import { api, startTestService, type TestService } from '../testkit/service.js';
import { checkResponse, OpenApiMismatch, openApiDocument, OPENAPI_PATH, type ReceivedResponse } from '../testkit/openapi-check.js';
import { openApiProblems } from './helpers/openapi-structure.js';

const JOB = '2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f';
const SIGHTING = '9b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3';
const DATE = 'Sun, 22 Nov 2026 04:10:00 GMT';
const json = { 'content-type': 'application/json; charset=utf-8' };
const link = (file: string) => `http://appliance:8080/results/${JOB}/${file}?expires=1795000000&sig=${'ab'.repeat(32)}`;

function sighting(): Record<string, unknown> {
  return {
    sighting_id: SIGHTING, start_frame: 10, end_frame: 80, frames: 60, confidence: 0.91,
    gender: '', gender_confidence: -1, thumbnail: link(`${JOB}_sighting_1.jpg`),
  };
}

function faceLogTask(): Record<string, unknown> {
  return {
    analytic: 'face_log', job_id: JOB, complete: true, success: true, message: 'Found 1 sightings, 1 tracks, 60 faces',
    start_time: DATE, finish_time: DATE, frames: 100, frames_processed: 100, input_video: 'lobby.mp4',
    resolution: '1280x720@25.0fps', number_of_sightings: 1, results_video: link(`face_log_${JOB}.mp4`),
    results_xml: link(`face_log_${JOB}.xml`), sightings: [sighting()], start_frame: 0,
  };
}

function kamcheckTask(): Record<string, unknown> {
  return {
    analytic: 'kamcheck', job_id: JOB, complete: true, success: true, message: 'Tampering probability 87%', probability: 87,
    causes: { blur: 87, moved: 2, masked: 10, exposure: 0, frozen: 0, black: 0 }, start_time: DATE, finish_time: DATE,
  };
}

const ok = (r: Partial<ReceivedResponse> & { url: string; body: unknown }): ReceivedResponse => ({ method: 'GET', status: 200, headers: json, ...r });

describe('OpenAPI document', function () {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  it('is served at GET /openapi.json exactly as in the repository, behind auth', async () => {
    svc = await startTestService();
    const res = await api(`${svc.url}/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.body).to.deep.equal(JSON.parse(fs.readFileSync(OPENAPI_PATH, 'utf8')));
    const raw = await fetch(`${svc.url}/openapi.json`, { headers: { authorization: (await import('../testkit/service.js')).AUTH } });
    expect(Buffer.from(await raw.arrayBuffer()).equals(fs.readFileSync(OPENAPI_PATH))).to.equal(true);
    expect((await api(`${svc.url}/openapi.json`, { auth: null })).status).to.equal(401);
  });

  it('is a structurally valid OpenAPI 3.1 document whose schemas are valid JSON Schema 2020-12', () => {
    expect(openApiProblems(openApiDocument())).to.deep.equal([]);
    // The structural check does find problems.
    const broken = structuredClone(openApiDocument());
    delete broken.info.version;
    broken.paths['/kamcheck/{job_id}'].parameters = [];
    broken.paths['/kamcheck'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nothing' };
    broken.paths['/healthz'].get.responses['200'].content['application/json'].schema = { type: 'object', minProperties: 'two' };
    const problems = openApiProblems(broken).join('\n');
    expect(problems).to.contain("must have required property 'version'");
    expect(problems).to.contain('path parameter {job_id} is not declared');
    expect(problems).to.contain('#/components/schemas/Nothing does not resolve');
    expect(problems).to.contain('minProperties');
  });

  it('describes every route of the app, and every operation it describes is a route', async () => {
    const svc = await startTestService({ WORKERS: '0' });
    let router: Router;
    try {
      router = (svc.service.app.middleware.find((m) => (m as { router?: Router }).router) as unknown as { router: Router }).router;
    } finally {
      await svc.stop();
    }
    const normalise = (p: string) => p.replace(/\{[^}]+\}|:[A-Za-z_]+/g, '{}');
    const routes = new Set(
      router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${normalise(String(layer.path))}`)),
    );
    const documented = new Set(
      Object.entries(openApiDocument().paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
        ['get', 'put', 'post', 'delete', 'patch'].filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${normalise(p)}`),
      ),
    );
    expect([...routes].sort()).to.deep.equal([...documented].sort());
  });

  it('names what the contract names: endpoints, task fields, Sighting, face-log parameters, causes, errors, result links', () => {
    const doc = openApiDocument();
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
      Object.keys(item).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(ops).to.include.members([
      'POST /kamcheck', 'GET /kamcheck', 'GET /kamcheck/{job_id}', 'POST /face_log', 'GET /face_log/{job_id}', 'GET /face_detect',
      'GET /results/{job_id}/{file}', 'GET /healthz', 'GET /metrics', 'GET /openapi.json',
      // The original service's endpoints beyond the seed (SPEC).
      'POST /face_log_image', 'GET /face_log_image/{job_id}', 'GET /face_log_image/{page}/{per_page}',
      'POST /face_detect', 'GET /face_detect/{job_id}', 'POST /face_detect_image', 'GET /face_detect_image/{job_id}',
      'GET /face_detect_image/{page}/{per_page}', 'GET /results/{job_id}/{token}/{file}', 'POST /kamcheck_get_reference',
      'GET /kamcheck_get_reference/{job_id}', 'GET /kamcheck_get_reference/{page}/{per_page}',
    ]);
    for (const p of ['/face_detect', '/face_log_image', '/face_detect_image']) {
      expect(Object.keys(doc.paths[p].post.requestBody.content['multipart/form-data'].schema.properties), p).to.include('blur');
    }
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.Sighting.properties)).to.have.members([
      'sighting_id', 'start_frame', 'end_frame', 'frames', 'confidence', 'gender', 'gender_confidence', 'thumbnail',
    ]);
    expect(Object.keys(schemas.FaceLogTaskFields.properties)).to.include.members([
      'analytic', 'job_id', 'complete', 'message', 'start_time', 'finish_time', 'success', 'frames', 'frames_processed',
      'input_video', 'resolution', 'number_of_sightings', 'results_video', 'results_xml', 'sightings', 'start_frame', 'error',
    ]);
    expect(Object.keys(schemas.FaceLogTaskFields.properties)).to.include('results_image');
    expect(Object.keys(schemas.KamcheckTask.properties)).to.include.members(['probability', 'causes', 'error']);
    expect(Object.keys(schemas.KamcheckReferenceTask.properties)).to.include.members(['frame_number', 'reference_image', 'error']);
    expect(Object.keys(schemas.TamperCauses.properties)).to.have.members(['blur', 'moved', 'masked', 'exposure', 'frozen', 'black']);
    expect(schemas.TaskError.required).to.have.members(['code', 'message']);
    const faceLogForm = doc.paths['/face_log'].post.requestBody.content['multipart/form-data'].schema.properties;
    expect(Object.keys(faceLogForm)).to.have.members(['video', 'image', 'start_frame', 'max_frames', 'min_size', 'gender', 'track_thumbnails', 'blur', 'callback_url']);
    expect(faceLogForm.callback_url.maxLength).to.equal(2048);
    expect(Object.keys(doc.webhooks)).to.have.members(['job.completed', 'camera.state_changed', 'camera.acknowledged']);
    for (const hook of Object.values(doc.webhooks) as { post: { parameters: { name: string; in: string }[]; responses: object } }[]) {
      expect(hook.post.parameters.map((p) => `${p.in} ${p.name}`)).to.have.members(['header X-Event-Id', 'header X-Event-Type', 'header X-Timestamp', 'header X-Signature']);
      expect(Object.keys(hook.post.responses)).to.have.members(['2XX', 'default']);
    }
    expect(faceLogForm.start_frame.minimum).to.equal(0);
    expect(faceLogForm.min_size.minimum).to.equal(30);
    expect(faceLogForm.max_frames.minimum).to.equal(0);
    const results = doc.paths['/results/{job_id}/{file}'];
    expect(results.parameters.map((p: { name?: string; $ref?: string }) => p.name ?? p.$ref)).to.include.members(['file', 'expires', 'sig']);
    expect(Object.keys(results.get.responses)).to.include.members(['200', '401', '404', '410']);
    const codes = JSON.stringify(doc);
    for (const code of [
      'missing_file', 'invalid_parameter', 'unauthorized', 'not_found', 'method_not_allowed', 'expired', 'payload_too_large',
      'unsupported_media', 'too_many_frames', 'resolution_mismatch', 'busy', 'insufficient_storage', 'unhealthy', 'bad_request',
    ]) {
      expect(codes, code).to.contain(`"${code}"`);
    }
  });

  it('accepts what the contract promises and rejects drift', () => {
    const accepts = (r: ReceivedResponse) => expect(() => checkResponse(r), r.url).to.not.throw();
    const rejects = (r: ReceivedResponse, why: RegExp) => expect(() => checkResponse(r), r.url).to.throw(OpenApiMismatch, why);

    accepts(ok({ url: `/face_log/${JOB}`, body: { status: 'success', task: faceLogTask() } }));
    const history = { ...faceLogTask(), sightings: [{ sighting_id: SIGHTING, start_frame: 10, end_frame: 80, frames: 60 }] };
    accepts(ok({ url: '/face_detect', body: { status: 'success', tasks: [history] } }));
    accepts(ok({ url: `/kamcheck/${JOB}`, body: { status: 'success', task: kamcheckTask() } }));
    accepts(ok({ url: `/results/${JOB}/face_log_${JOB}.mp4`, headers: { 'content-type': 'video/mp4' }, body: 'bytes' }));
    accepts(ok({ url: `/results/${JOB}/face_log_${JOB}.xml`, status: 410, body: { status: 'error', message: 'gone', error: { code: 'expired', message: 'gone' } } }));
    rejects(ok({ url: `/results/${JOB}/face_log_${JOB}.xml`, status: 410, body: { status: 'error', error: { code: 'expired', message: 'gone' } } }), /must have required property 'message'/);
    accepts(ok({ url: `/results/${JOB}/face_log_${JOB}.xml`, headers: { 'content-type': 'application/xml; charset=utf-8' }, body: '<faces/>' }));
    // The face analytics of an image: results_image, and no overlay video for a face detection.
    const image = { results_image: link(`face_log_${JOB}.jpg`) };
    accepts(ok({ url: `/face_log_image/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), analytic: 'face_log_image', ...image } } }));
    rejects(ok({ url: `/face_log_image/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), analytic: 'face_log_image' } } }), /results_image/);
    rejects(ok({ url: `/face_log/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), ...image } } }), /boolean schema is false/);
    rejects(ok({ url: `/face_log/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), analytic: 'face_detect' } } }), /analytic/);
    const { results_video: _v, ...noVideo } = faceLogTask();
    accepts(ok({ url: `/face_detect_image/${JOB}`, body: { status: 'success', task: { ...noVideo, analytic: 'face_detect_image', ...image } } }));
    rejects(ok({ url: `/face_detect_image/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), analytic: 'face_detect_image', ...image } } }), /boolean schema is false/);
    rejects(ok({ url: `/face_detect/${JOB}`, body: { status: 'success', task: { ...noVideo, analytic: 'face_detect' } } }), /results_video/);
    accepts(ok({ url: '/face_detect', body: { status: 'success', tasks: [history, { ...history, analytic: 'face_log_image', ...image }] } }));
    rejects(ok({ url: '/face_detect', body: { status: 'success', tasks: [{ ...history, analytic: 'face_detect' }] } }), /allowed values/);
    accepts(ok({ url: '/face_detect_image/1/10', body: { status: 'success', tasks: [{ ...history, analytic: 'face_detect' }] } }));
    const pick = {
      analytic: 'kamcheck_get_reference', job_id: JOB, complete: true, success: true, message: 'Frame 12 of 20 is the quietest',
      start_time: DATE, finish_time: DATE, frame_number: 12, reference_image: link(`kamcheck_reference_${JOB}.jpg`),
    };
    accepts(ok({ url: `/kamcheck_get_reference/${JOB}`, body: { status: 'success', task: pick } }));
    const { reference_image: _r, ...noImage } = pick;
    rejects(ok({ url: `/kamcheck_get_reference/${JOB}`, body: { status: 'success', task: noImage } }), /reference_image/);
    rejects(ok({ url: `/kamcheck_get_reference/${JOB}`, body: { status: 'success', task: { ...pick, analytic: 'kamcheck' } } }), /analytic/);
    const failed = { analytic: 'kamcheck', job_id: JOB, complete: true, success: false, message: 'The image cannot be decoded', start_time: DATE, finish_time: DATE, error: { code: 'decode_failed', message: 'The image cannot be decoded' } };
    accepts(ok({ url: `/kamcheck/${JOB}`, body: { status: 'success', task: failed } }));

    // A field the document does not know, a missing result, a misspelt field.
    rejects(ok({ url: `/kamcheck/${JOB}`, body: { status: 'success', task: { ...kamcheckTask(), score: 3 } } }), /must NOT have additional properties/);
    const { probability: _p, ...noProbability } = kamcheckTask();
    rejects(ok({ url: `/kamcheck/${JOB}`, body: { status: 'success', task: noProbability } }), /probability/);
    rejects(ok({ url: `/kamcheck/${JOB}`, body: { status: 'success', task: { ...failed, probability: 3 } } }), /boolean schema is false|must NOT/);
    rejects(ok({ url: `/kamcheck/${JOB}`, body: { status: 'success', task: { ...kamcheckTask(), complete: false } } }), /finish_time|boolean schema/);
    const badSighting = { ...sighting(), gender: 'unknown' };
    rejects(ok({ url: `/face_log/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), sightings: [badSighting] } } }), /gender/);
    rejects(ok({ url: `/face_log/${JOB}`, body: { status: 'success', task: { ...faceLogTask(), resolution: '1280x720@25fps' } } }), /resolution/);
    // Undocumented status, path, error code, content type; a required header missing.
    rejects(ok({ url: '/kamcheck', method: 'POST', status: 404, body: { status: 'error', error: { code: 'not_found', message: 'x' } } }), /404 is not documented/);
    rejects(ok({ url: '/kamcheck', method: 'POST', status: 500, body: { status: 'error', error: { code: 'internal_error', message: 'x' } } }), /500 is not documented/);
    rejects(ok({ url: '/somewhere/else', body: { status: 'success' } }), /200 is not documented/);
    rejects(ok({ url: '/kamcheck', method: 'POST', status: 400, body: { status: 'error', error: { code: 'busy', message: 'x' } } }), /allowed values/);
    rejects(ok({ url: '/kamcheck', headers: { 'content-type': 'text/html' }, body: '<html>' }), /content type "text\/html"/);
    rejects(ok({ url: '/kamcheck', status: 401, body: { status: 'error', error: { code: 'unauthorized', message: 'x' } } }), /WWW-Authenticate/);
    rejects(ok({ url: '/kamcheck', method: 'POST', status: 503, body: { status: 'error', error: { code: 'busy', message: 'x' } } }), /Retry-After/);
  });
});
