import { dirname, relative, resolve, sep } from 'node:path';

/** The repository root (this file lives in `<root>/eslint-rules/`). */
const root = resolve(import.meta.dirname, '..');

/**
 * Shipped code (what the image build compiles: shared/, functions/, daemons/, proto/) must not import
 * tests/: `.dockerignore` leaves tests/ out of the build context, so such an import breaks every image.
 * The specifier is resolved against the importing file, so any relative spelling is caught.
 */
export const noTestsImport = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { tests: "shipped code imports '{{spec}}' (under tests/, which the image build does not have): move what it needs into shared/" },
  },
  create(context) {
    const check = (node) => {
      const spec = node?.type === 'Literal' && typeof node.value === 'string' ? node.value : undefined;
      if (spec === undefined || !spec.startsWith('.')) return;
      const target = relative(root, resolve(dirname(context.filename), spec));
      if (target === 'tests' || target.startsWith(`tests${sep}`)) context.report({ node, messageId: 'tests', data: { spec } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.argument),
    };
  },
};
