// Generates the camera streams of the RTSP test server (testkit/stream-fixtures.ts) from the
// footage shipped with Debian's opencv-doc, in a few seconds.
//
//   node build/scripts/make-stream-fixtures.js [output dir]
//
// The output dir defaults to test/fixtures/generated/streams. Generated files are never committed.
import { DEFAULT_STREAM_FIXTURE_DIR, generateStreamFixtures } from '../testkit/stream-fixtures.js';

const args = process.argv.slice(2);
if (args.length > 1 || args.some((a) => a.startsWith('-'))) {
  console.error('usage: node build/scripts/make-stream-fixtures.js [output dir]');
  process.exit(2);
}
generateStreamFixtures(args[0] ?? DEFAULT_STREAM_FIXTURE_DIR, (line) => console.log(line)).catch((err) => {
  console.error(err);
  process.exit(1);
});
