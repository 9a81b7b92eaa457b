/**
 * The `virtualization` ModuleConfig as the checks read it. The envelope is checked strictly; the
 * settings are read leniently here (a wrong type reads as absent) because one check reports every
 * schema problem of the settings with its path, and the old object may predate today's schema.
 */
import { z } from 'zod';

export const MODULE_NAME = 'virtualization';

export const ModuleConfigSchema = z.looseObject({
  apiVersion: z.literal('deckhouse.io/v1alpha1'),
  kind: z.literal('ModuleConfig'),
  metadata: z.looseObject({ name: z.string().optional() }),
  spec: z.looseObject({ settings: z.record(z.string(), z.unknown()).optional() }).optional(),
});
export type ModuleConfig = z.infer<typeof ModuleConfigSchema>;

type Json = Record<string, unknown>;

function at(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Json)[key];
  }
  return current;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function settingsOf(mc: ModuleConfig | undefined): Json | undefined {
  return mc?.spec?.settings;
}

export function cidrsOf(mc: ModuleConfig | undefined): string[] {
  return strings(at(settingsOf(mc), 'virtualMachineCIDRs'));
}

export function featureGatesOf(mc: ModuleConfig | undefined): string[] {
  return strings(at(settingsOf(mc), 'featureGates'));
}

export function dvcrPvcOf(mc: ModuleConfig | undefined): { storageClassName: string | undefined; size: string | number | undefined } {
  const pvc = at(settingsOf(mc), 'dvcr', 'storage', 'persistentVolumeClaim');
  const size = at(pvc, 'size');
  return { storageClassName: optionalString(at(pvc, 'storageClassName')), size: typeof size === 'number' ? size : optionalString(size) };
}

export function defaultStorageClassOf(mc: ModuleConfig | undefined, section: 'virtualImages' | 'virtualDisks'): string | undefined {
  return optionalString(at(settingsOf(mc), section, 'defaultStorageClassName'));
}

export function systemNetworkOf(mc: ModuleConfig | undefined): string | undefined {
  const network = at(settingsOf(mc), 'liveMigration', 'network');
  return at(network, 'type') === 'SystemNetwork' ? (optionalString(at(network, 'systemNetwork', 'name')) ?? '') : undefined;
}
