import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Stable child-logger keys; using these names keeps log queries uniform across units. */
export interface LogBindings {
  component?: string;
  handler?: string;
  object?: string;
  requestId?: string;
  [key: string]: unknown;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

function initialLevel(): LogLevel {
  // The one place that reads the environment outside config parsing: the logger must exist before
  // config is parsed, so that config errors themselves are logged.
  const raw = process.env['LOG_LEVEL'];
  if (raw !== undefined && (LEVELS as readonly string[]).includes(raw)) return raw as LogLevel;
  return process.env['NODE_ENV'] === 'test' ? 'silent' : 'info';
}

const options: LoggerOptions = {
  level: initialLevel(),
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
  serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
};

/** The process-wide root logger (JSON lines on stdout). Components take children of it. */
export const rootLogger: Logger = pino(options);

/** A child logger carrying stable bindings (component, handler, object, requestId). */
export function childLogger(bindings: LogBindings, parent: Logger = rootLogger): Logger {
  return parent.child(bindings);
}

/** Change the root level at run time (config decides it after start-up). */
export function setLogLevel(level: LogLevel): void {
  rootLogger.level = level;
}
