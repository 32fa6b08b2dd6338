// The service's name and version, as package.json states them; the HTTP `Server` header names both.
import fs from 'node:fs';

interface PackageJson {
  name: string;
  version: string;
}

// build/lib/version.js -> the project's package.json, wherever the service is started from.
const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as PackageJson;

const SERVICE_NAME: string = pkg.name;
const SERVICE_VERSION: string = pkg.version;
/** The `Server` header of every response, e.g. `video-analytics-appliance/0.1.0`. */
export const SERVER_HEADER = `${SERVICE_NAME}/${SERVICE_VERSION}`;
