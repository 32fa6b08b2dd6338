// Reading a stored job input back: every field present with the type the analytic declared.
import { ServiceError } from '../errors.js';

type FieldType = 'string' | 'number' | 'boolean';
type TypeOf<T extends FieldType> = T extends 'string' ? string : T extends 'number' ? number : boolean;

/** The stored record does not hold what its analytic needs: a defect, never the client's fault. */
export class InvalidJobInputError extends ServiceError {
  constructor(message: string) {
    super('invalid_job_input', message);
  }
}

export function readFields<S extends Record<string, FieldType>>(raw: unknown, shape: S): { [K in keyof S]: TypeOf<S[K]> } {
  if (typeof raw !== 'object' || raw === null) throw new InvalidJobInputError('the job input is not an object');
  const record = raw as Record<string, unknown>;
  for (const [field, type] of Object.entries(shape)) {
    const value = record[field];
    if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
      throw new InvalidJobInputError(`the job input's "${field}" is not a ${type}`);
    }
  }
  return Object.fromEntries(Object.keys(shape).map((k) => [k, record[k]])) as { [K in keyof S]: TypeOf<S[K]> };
}

/** Fields an input may lack (`callbackUrl`): those present, each of the type declared. */
export function readOptionalFields<S extends Record<string, FieldType>>(raw: unknown, shape: S): { [K in keyof S]?: TypeOf<S[K]> } {
  const record = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const present = Object.keys(shape).filter((k) => record[k] !== undefined && record[k] !== null);
  return readFields(Object.fromEntries(present.map((k) => [k, record[k]])), Object.fromEntries(present.map((k) => [k, shape[k]]))) as {
    [K in keyof S]?: TypeOf<S[K]>;
  };
}
