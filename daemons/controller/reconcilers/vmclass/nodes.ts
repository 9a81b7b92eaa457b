/** Node selection for classes: label selectors, taints and tolerations, CPU feature labels (pure). */
import type { LabelSelector, Toleration } from '../../../../shared/api/k8s/core.js';
import type { Node, Taint } from '../../kube/resources.js';
import { parseQuantity } from '../../../../shared/api/k8s/quantity.js';

/** Node label prefix that advertises a CPU feature. */
export const CPU_FEATURE_LABEL_PREFIX = 'cpu-feature.node.virtualization.deckhouse.io/';

/** Whether labels satisfy a metav1.LabelSelector (an absent selector matches everything). */
export function matchesSelector(labels: Readonly<Record<string, string>> | undefined, selector: LabelSelector | undefined): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) if (have[key] !== value) return false;
  for (const req of selector?.matchExpressions ?? []) {
    const value = have[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Whether one toleration tolerates a taint (core/v1 semantics). */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== '' && toleration.effect !== taint.effect) return false;
  if (toleration.operator === 'Exists') return toleration.key === undefined || toleration.key === '' || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

/**
 * Taints the node lifecycle sets for a passing condition (not-ready, unreachable, pressure, ...): they
 * say how a node is now, not where a class may place VMs, so they do not remove a node from a class.
 */
const CONDITION_TAINT_PREFIX = 'node.kubernetes.io/';

/** A node takes the class's VMs: it matches the selector, is schedulable, and every placement taint is tolerated. */
export function nodeFits(node: Node, selector: LabelSelector | undefined, tolerations: readonly Toleration[]): boolean {
  if (node.spec?.unschedulable === true || !matchesSelector(node.metadata.labels, selector)) return false;
  const hard = (node.spec?.taints ?? []).filter((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !t.key.startsWith(CONDITION_TAINT_PREFIX));
  return hard.every((taint) => tolerations.some((t) => tolerates(t, taint)));
}

/** CPU features every given node advertises through its labels, sorted. */
export function commonCpuFeatures(nodes: readonly Node[]): string[] {
  const sets = nodes.map(
    (n) =>
      new Set(
        Object.keys(n.metadata.labels ?? {})
          .filter((k) => k.startsWith(CPU_FEATURE_LABEL_PREFIX))
          .map((k) => k.slice(CPU_FEATURE_LABEL_PREFIX.length)),
      ),
  );
  const [first, ...rest] = sets;
  if (first === undefined) return [];
  return [...first].filter((f) => rest.every((s) => s.has(f))).sort();
}

/** The largest allocatable CPU and memory of one node among the given ones. */
export function maxAllocatable(nodes: readonly Node[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const resource of ['cpu', 'memory']) {
    let best: { value: number; text: string } | undefined;
    for (const node of nodes) {
      const text = node.status?.allocatable?.[resource];
      const value = parseQuantity(text);
      if (text !== undefined && value !== undefined && (best === undefined || value > best.value)) best = { value, text };
    }
    if (best !== undefined) out[resource] = best.text;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
