// Structured JSON logs (pino). Tests pass their own destination to capture lines in memory.
import { pino, type DestinationStream, type Logger } from 'pino';

export function createLogger(destination?: DestinationStream): Logger {
  return pino({ level: process.env.LOG_LEVEL || 'info', base: { pid: process.pid } }, destination);
}
