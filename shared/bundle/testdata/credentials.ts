/**
 * A bundle.test entry: the credentials of the kubeconfig at KUBECONFIG as a unit's client would send
 * them (client-node's KubeConfig, bundled as every unit is), printed as one JSON line.
 */
import type https from 'node:https';
import { applyCredentials, loadKubeConfig } from '../../kube/kubeconfig.js';

async function main(): Promise<void> {
  const kc = loadKubeConfig({ kubeconfigPath: process.env['KUBECONFIG'] });
  const options: https.RequestOptions = {};
  await applyCredentials(kc, options);
  process.stdout.write(`${JSON.stringify({ server: kc.getCurrentCluster()?.server, headers: options.headers })}\n`);
}

// A bundled unit is CommonJS: no top-level await.
void main();
