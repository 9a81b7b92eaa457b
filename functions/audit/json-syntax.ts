/**
 * Where JSON text stops being JSON (RFC 8259), found by our own scan rather than by reading the
 * engine's error message: V8's messages are not a stable interface and may quote the input, and audit
 * lines can carry sensitive request data. Called only after JSON.parse has refused the text.
 */
export interface JsonSyntaxError {
  /** UTF-16 offset of the first character that cannot continue valid JSON. */
  readonly offset: number;
  /** The text ended where more was needed (a truncated line). */
  readonly endOfInput: boolean;
}

/** Ends the scan at the offending offset. */
class Stop extends Error {
  constructor(readonly at: number) {
    super(`JSON syntax error at ${at}`);
  }
}

type State = 'value' | 'firstValue' | 'key' | 'firstKey' | 'after';

const isWs = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/** The first syntax error of `text`, or undefined when it is one valid JSON value. Iterative: any depth. */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  try {
    scan(text);
    return undefined;
  } catch (err: unknown) {
    if (err instanceof Stop) return { offset: err.at, endOfInput: err.at >= text.length };
    throw err;
  }
}

function scan(text: string): void {
  const n = text.length;
  const stack: string[] = [];
  let i = 0;
  let state: State = 'value';
  for (;;) {
    while (i < n && isWs(text[i])) i++;
    const c = text[i];
    if (state === 'after') {
      const top = stack.at(-1);
      if (top === undefined) {
        if (i < n) throw new Stop(i);
        return;
      }
      if (c === ',') state = top === '{' ? 'key' : 'value';
      else if ((c === ']' && top === '[') || (c === '}' && top === '{')) stack.pop();
      else throw new Stop(i);
      i++;
    } else if (state === 'key' || state === 'firstKey') {
      if (state === 'firstKey' && c === '}') {
        stack.pop();
        i++;
        state = 'after';
        continue;
      }
      if (c !== '"') throw new Stop(i);
      i = stringEnd(text, i);
      while (i < n && isWs(text[i])) i++;
      if (text[i] !== ':') throw new Stop(i);
      i++;
      state = 'value';
    } else if (state === 'firstValue' && c === ']') {
      stack.pop();
      i++;
      state = 'after';
    } else if (c === '{' || c === '[') {
      stack.push(c);
      i++;
      state = c === '{' ? 'firstKey' : 'firstValue';
    } else {
      i = scalarEnd(text, i);
      state = 'after';
    }
  }
}

function scalarEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === 't') return literalEnd(text, i, 'true');
  if (c === 'f') return literalEnd(text, i, 'false');
  if (c === 'n') return literalEnd(text, i, 'null');
  if (c === '-' || isDigit(c)) return numberEnd(text, i);
  throw new Stop(i);
}

function literalEnd(text: string, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) throw new Stop(i + k);
  return i + word.length;
}

function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    const c = text[j];
    if (c === undefined || c < ' ') throw new Stop(j);
    if (c === '"') return j + 1;
    if (c !== '\\') {
      j++;
      continue;
    }
    const e = text[j + 1];
    if (e !== undefined && ESCAPES.has(e)) j += 2;
    else if (e === 'u') {
      for (let k = 2; k < 6; k++) if (!/^[0-9a-fA-F]$/.test(text[j + k] ?? '')) throw new Stop(j + k);
      j += 6;
    } else throw new Stop(j + 1);
  }
}

function numberEnd(text: string, start: number): number {
  let j = start;
  if (text[j] === '-') j++;
  if (text[j] === '0') j++;
  else j = digitsEnd(text, j);
  if (text[j] === '.') j = digitsEnd(text, j + 1);
  if (text[j] === 'e' || text[j] === 'E') {
    j++;
    if (text[j] === '+' || text[j] === '-') j++;
    j = digitsEnd(text, j);
  }
  return j;
}

/** One or more digits from `j`. */
function digitsEnd(text: string, j: number): number {
  if (!isDigit(text[j])) throw new Stop(j);
  while (isDigit(text[j])) j++;
  return j;
}
