/**
 * The controller's hot-plug port wired to REAL virt-api (v1.6.0), for the real-KubeVirt tests, which
 * run without the aggregated subresource API: each call is turned into KubeVirt's request by the
 * subresource API's own translation (`functions/subresources/options.ts`) and sent by its own virt-api
 * client (`functions/subresources/backend.ts`) as the function sends it: mutual TLS with a client
 * certificate of the apiserver's front-proxy CA (virt-api trusts the requestheader CA it reads from
 * `kube-system/extension-apiserver-authentication`) and the caller in `X-Remote-User`/`X-Remote-Group`
 * (virt-api asks the apiserver, through the rewriter, whether that user may). Every call is recorded
 * (`RecordingHotplug`).
 */
import { join } from 'node:path';
import { VirtApi, type BackendAnswer } from '../../../functions/subresources/backend.js';
import { plainUpstream } from '../../../functions/subresources/options.js';
import { getTestEnv } from '../../env/index.js';
import { RecordingHotplug } from '../controller/recording-hotplug.js';
import type { RealKubeVirt } from './real-kubevirt.js';

/** virt-api's answer to a call it did not accept: its status and its message. */
export class VirtApiRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const USER = { name: 'system:serviceaccount:d8-virtualization:virtualization-controller', uid: undefined, groups: [], extra: {} };

/** virt-api's `message` (a metav1.Status) or its raw answer. */
function messageOf(answer: BackendAnswer): string {
  const text = answer.body.toString('utf8');
  try {
    const status = JSON.parse(text) as { message?: unknown };
    return typeof status.message === 'string' ? status.message : text;
  } catch {
    return text;
  }
}

export class RealVirtApiHotplug extends RecordingHotplug {
  private readonly virtApi: VirtApi;

  constructor(kv: RealKubeVirt) {
    super();
    const pki = join(getTestEnv().workDir, 'pki');
    this.virtApi = new VirtApi({
      url: `https://127.0.0.1:${kv.plan.ports.virtApi}`,
      caFile: kv.plan.caPath,
      certFile: join(pki, 'front-proxy-client.crt'),
      keyFile: join(pki, 'front-proxy-client.key'),
      reloadMs: 60_000,
      // The test's stand-in for the subresources function's identity: a user the apiserver lets do anything.
      remoteUser: 'kubevirt-hotplug-test',
      remoteGroups: ['system:masters', 'system:authenticated'],
      timeoutMs: 10_000,
    });
  }

  /** A VM subresource call as the subresource API makes it from these query options; a refusal throws VirtApiRefusal. */
  async put(sub: string, namespace: string, vm: string, query: Record<string, string | undefined>, signal?: AbortSignal): Promise<number> {
    const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    const up = plainUpstream(sub, namespace, vm, q, Buffer.alloc(0));
    return this.send(up.path, up.body, signal);
  }

  /** PUT `body` to virt-api at `path` as it is; the status when it is 2xx, VirtApiRefusal otherwise. */
  async send(path: string, body: Buffer, signal?: AbortSignal): Promise<number> {
    const answer = await this.virtApi.call('PUT', path, body, USER, signal);
    if (answer.status < 200 || answer.status > 299) throw new VirtApiRefusal(answer.status, `${answer.status} ${messageOf(answer)}`);
    return answer.status;
  }
}
