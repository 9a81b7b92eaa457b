/** An in-memory Enrichment for tests: objects are given up front, admins are listed by name. */
import type {
  Enrichment,
  InternalVMIView,
  MetaView,
  ModuleConfigView,
  ModuleView,
  NodeView,
  PodView,
  VDView,
  VMOPView,
  UserRef,
  VMView,
} from '../enrichment.js';

export interface FakeObjects {
  vms?: VMView[];
  vds?: VDView[];
  vmops?: VMOPView[];
  pods?: PodView[];
  nodes?: NodeView[];
  modules?: ModuleView[];
  moduleConfigs?: ModuleConfigView[];
  internalVMIs?: InternalVMIView[];
  /** Users for whom isAdmin answers true; everyone else gets false. */
  admins?: string[];
  /** isAdmin answers undefined (the access review could not be made). */
  adminUnknown?: boolean;
}

function index<T extends { metadata?: MetaView | undefined }>(objects: T[] | undefined): Map<string, T> {
  const out = new Map<string, T>();
  for (const o of objects ?? []) out.set(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o);
  return out;
}

export class FakeEnrichment implements Enrichment {
  private readonly vms: Map<string, VMView>;
  private readonly vds: Map<string, VDView>;
  private readonly vmops: Map<string, VMOPView>;
  private readonly pods: Map<string, PodView>;
  private readonly nodes: Map<string, NodeView>;
  private readonly modules: Map<string, ModuleView>;
  private readonly moduleConfigs: Map<string, ModuleConfigView>;
  private readonly internalVMIs: Map<string, InternalVMIView>;
  private readonly admins: ReadonlySet<string>;
  private readonly adminUnknown: boolean;
  /** Usernames isAdmin was asked about, in order. */
  readonly adminQueries: string[] = [];

  constructor(objects: FakeObjects = {}) {
    this.vms = index(objects.vms);
    this.vds = index(objects.vds);
    this.vmops = index(objects.vmops);
    this.pods = index(objects.pods);
    this.nodes = index(objects.nodes);
    this.modules = index(objects.modules);
    this.moduleConfigs = index(objects.moduleConfigs);
    this.internalVMIs = index(objects.internalVMIs);
    this.admins = new Set(objects.admins ?? []);
    this.adminUnknown = objects.adminUnknown ?? false;
  }

  getVM(namespace: string, name: string): VMView | undefined {
    return this.vms.get(`${namespace}/${name}`);
  }
  getVD(namespace: string, name: string): VDView | undefined {
    return this.vds.get(`${namespace}/${name}`);
  }
  getVMOP(namespace: string, name: string): VMOPView | undefined {
    return this.vmops.get(`${namespace}/${name}`);
  }
  getPod(namespace: string, name: string): PodView | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }
  getNode(name: string): NodeView | undefined {
    return this.nodes.get(`/${name}`);
  }
  getModule(name: string): ModuleView | undefined {
    return this.modules.get(`/${name}`);
  }
  getModuleConfig(name: string): ModuleConfigView | undefined {
    return this.moduleConfigs.get(`/${name}`);
  }
  getInternalVMI(namespace: string, name: string): InternalVMIView | undefined {
    return this.internalVMIs.get(`${namespace}/${name}`);
  }
  isAdmin(user: UserRef): Promise<boolean | undefined> {
    this.adminQueries.push(user.username);
    return Promise.resolve(this.adminUnknown ? undefined : this.admins.has(user.username));
  }
}
