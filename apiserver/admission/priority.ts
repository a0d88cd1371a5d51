import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { rec, str } from '../registry/obj-access';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { forbiddenSubject } from './resource-quota';

/** Reads PriorityClasses: one by name (null when absent), and all of them (for the global default). */
export interface PriorityClassLookup {
  get(name: string): Promise<KObject | null>;
  list(): Promise<KObject[]>;
}

/** Upstream DefaultPriorityWhenNoDefaultClassExists. */
export const DEFAULT_PRIORITY = 0;

const isPods = (a: AdmissionAttributes) => a.type.group === '' && a.type.resource === 'pods' && a.subresource === '';
const isPriorityClasses = (a: AdmissionAttributes) => a.type.group === 'scheduling.svc.io' && a.type.resource === 'priorityclasses' && a.subresource === '';

/**
 * Upstream's Priority admission plugin. A new pod gets spec.priority and spec.preemptionPolicy from
 * the PriorityClass its priorityClassName names (403 "no PriorityClass with name X was found"
 * otherwise), or, naming none, from the global default class (whose name it then gets) or
 * priority 0 and PreemptLowerPriority; a pod that sets a priority or policy disagreeing with the
 * class is refused with upstream's message. An update keeps the priority the pod was given. A
 * PriorityClass may be the global default only while no other class is.
 *
 * Where we differ: the pod defaults already set priority 0 and PreemptLowerPriority on a pod that
 * names no class (registry/types/pod-defaults.ts, for servers without this plugin), so such a pod's
 * priority 0 or PreemptLowerPriority is taken as unset; upstream refuses an explicit 0 when the
 * global default class has another value.
 */
export class PriorityAdmission implements AdmissionPlugin {
  readonly name = 'Priority';

  constructor(private readonly classes: PriorityClassLookup) {}

  async mutate(a: AdmissionAttributes): Promise<void> {
    if (!isPods(a) || !a.object) return;
    const spec = (a.object.spec ??= {}) as Record<string, unknown>;
    if (a.operation === 'UPDATE') {
      // As upstream: validation forbids changing these; an update that leaves them out keeps them.
      const old = rec(a.oldObject?.spec) ?? {};
      if (spec.priority === undefined && old.priority !== undefined) spec.priority = old.priority;
      if (spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
      return;
    }
    if (a.operation !== 'CREATE') return;
    const named = str(spec.priorityClassName) ?? '';
    let priority = DEFAULT_PRIORITY;
    let policy: string | undefined = 'PreemptLowerPriority';
    if (named === '') {
      // Defaulted values (see above) are not the client's.
      if (spec.priority === DEFAULT_PRIORITY) delete spec.priority;
      if (spec.preemptionPolicy === 'PreemptLowerPriority') delete spec.preemptionPolicy;
      const def = globalDefault(await this.classes.list());
      if (def) {
        spec.priorityClassName = def.metadata.name;
        priority = classValue(def);
        policy = str(def.preemptionPolicy);
      }
    } else {
      const pc = await this.classes.get(named);
      if (!pc) throw errors.forbidden(`${forbiddenSubject(a)} is forbidden: no PriorityClass with name ${named} was found`);
      priority = classValue(pc);
      policy = str(pc.preemptionPolicy);
    }
    // A value no int32 holds is left as it is for validation, which refuses it naming the field (422): upstream's decoder refuses it before admission.
    if (spec.priority !== undefined && !(Number.isSafeInteger(spec.priority) && Math.abs(spec.priority as number) <= 2 ** 31)) return;
    if (typeof spec.priority === 'number' && spec.priority !== priority) {
      throw errors.forbidden(
        `${forbiddenSubject(a)} is forbidden: the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (policy !== undefined) {
      if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== policy) {
        throw errors.forbidden(
          `${forbiddenSubject(a)} is forbidden: the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = policy;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPriorityClasses(a) || !a.object || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
    if (a.object.globalDefault !== true) return;
    const def = globalDefault(await this.classes.list());
    if (!def) return;
    if (a.operation === 'CREATE' || def.metadata.name !== a.object.metadata.name) {
      throw errors.forbidden(`${forbiddenSubject(a)} is forbidden: PriorityClass ${def.metadata.name} is already marked as default. Only one default can exist`);
    }
  }
}

function classValue(pc: KObject): number {
  return typeof pc.value === 'number' ? pc.value : DEFAULT_PRIORITY;
}

/** Upstream getDefaultPriorityClass: of the classes marked globalDefault, the one with the lowest value. */
export function globalDefault(classes: readonly KObject[]): KObject | undefined {
  let best: KObject | undefined;
  for (const c of classes) if (c.globalDefault === true && (!best || classValue(c) < classValue(best))) best = c;
  return best;
}
