import { dirname, relative, resolve, sep } from 'node:path';

/** The repository root (this file lives in `<root>/eslint-rules/`). */
const root = resolve(import.meta.dirname, '..');

/**
 * The room of a file: `functions/<name>`, `daemons/<name>` or `platform` (a unit), `shared` (the
 * library), or undefined (tests/, knative/, proto/, config files: they may import any unit).
 */
function roomOf(file) {
  const [top, name] = relative(root, file).split(sep);
  if ((top === 'functions' || top === 'daemons') && name !== undefined && !name.includes('.')) return `${top}/${name}`;
  if (top === 'platform' || top === 'shared') return top;
  return undefined;
}

/**
 * Each unit imports only its own folder and shared/; shared/ imports no unit. A contract two units
 * share (a schema, a label, a config parser) lives in shared/. Relative specifiers are resolved
 * against the importing file, so `../route-forge/x.js` from daemons/controller is caught as well.
 */
export const noCrossUnitImports = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { cross: '{{from}} imports {{to}} ({{spec}}): a unit imports only its own folder and shared/; move the shared contract to shared/' },
  },
  create(context) {
    const from = roomOf(context.filename);
    if (from === undefined) return {};
    const check = (node) => {
      const spec = node.source?.type === 'Literal' ? node.source.value : undefined;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const to = roomOf(resolve(dirname(context.filename), spec));
      if (to === undefined || to === from || to === 'shared') return;
      context.report({ node, messageId: 'cross', data: { from, to, spec } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
