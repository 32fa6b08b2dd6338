// `make run`: starts the service in the foreground on the environment's configuration.
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { startService } from './service.js';
import { NameTakenError, SchemaTooNewError } from './db/errors.js';

const logger = createLogger();

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const service = await startService(config, logger);
  const first = service.credentials;
  const where = first.fromEnvironment
    ? 'admins from AUTH_CREDENTIALS'
    : first.file
      ? `the first admin's password in ${first.file}${first.generated ? ' (generated now)' : ''}`
      : 'users in the database';
  logger.info(
    { url: service.url, workers: config.workers, dataDir: config.dataDir, webhookSecretFile: service.webhookSecret.file },
    'service started',
  );
  console.error(`Video analytics service listening on ${service.url} (${where})`);

  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: no new jobs; waiting for running ones');
    service.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

main().catch((err) => {
  logger.fatal({ err }, 'the service could not start');
  // A clash of names or a database of a newer release is the operator's to fix: said plainly.
  if (err instanceof NameTakenError || err instanceof SchemaTooNewError) console.error(`cannot start: ${err.message}`);
  process.exit(1);
});
