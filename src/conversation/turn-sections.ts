import type { TurnBody } from "../api/schemas";
import { taskStateLine, wrapTaskState } from "../artifacts/task-state";
import type { AppendixSection } from "../core/assemble";
import type { OmissionReason } from "../core/evidence";

export interface TurnSections {
  sections: AppendixSection[];
  omitted: { id: string; reason: OmissionReason }[];
}

/** The appendix blocks beside the context markers: the task state the turn carries. */
export function turnSections(body: TurnBody): (agent: { memory: boolean }) => Promise<TurnSections> {
  return async () => {
    const sections: AppendixSection[] = [];
    if (body.taskState?.length) {
      sections.push({ kind: "task_state", entries: body.taskState.map((ref) => ({ id: ref.pointer, text: taskStateLine(ref) })), wrap: wrapTaskState });
    }
    return { sections, omitted: [] };
  };
}
