// Fault injection (PROTOCOL.md section 13): the next matching requests misbehave on purpose.
import { FaultSpec } from '../schemas/mock-control.js';
import { checkJson } from './body.js';
import { newId } from './ids.js';
import type { FaultRecord, MockState } from './state.js';

/** Adds a fault after checking its shape; answers its id. */
export function injectFault(state: MockState, spec: unknown): { fault_id: string } {
  const checked = checkJson(FaultSpec, spec, 'fault');
  const record: FaultRecord = { id: newId('flt'), spec: checked, remaining: checked.times ?? 1 };
  state.faults.push(record);
  return { fault_id: record.id };
}

/**
 * The oldest fault matching this request, counted as used. A fault counts every request it
 * matches, even one where its effect cannot fire (a cut_stream on a JSON answer).
 */
export function takeFault(state: MockState, method: string, path: string): FaultSpec | undefined {
  const record = state.faults.find((fault) => matches(fault.spec, method, path));
  if (!record) return undefined;
  record.remaining -= 1;
  if (record.remaining <= 0) state.faults.splice(state.faults.indexOf(record), 1);
  return record.spec;
}

function matches(spec: FaultSpec, method: string, path: string): boolean {
  if (spec.method && spec.method.toUpperCase() !== method.toUpperCase()) return false;
  const want = spec.path.split('/');
  const got = path.split('/');
  // `*` stands for exactly one segment, so the two paths must have as many segments.
  return want.length === got.length && want.every((segment, i) => segment === '*' || segment === got[i]);
}
