import { renderIdentity, renderPersonaSwitch } from "../../core/identity";
import { ok, type Result } from "../../core/problem";
import { admitText, redact, type SecretHit } from "../../protect";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Identified {
  /** The identity block, frozen at the conversation's first turn. */
  identity: string;
  /** Another agent takes over with this turn: its persona arrives as a note on the user's message. */
  switching: boolean;
  personaNote: string | undefined;
  /** Secrets redacted from the persona note. */
  personaHits: SecretHit[];
}

/**
 * Who the model is: the identity block is frozen at the first turn (the app's prompt is the system message's own
 * instruction: redacted, not neutralised, since it may describe the runtime's tags). A later agent brings its persona
 * as a note, which passes the trust boundary like any text from an app.
 */
export function identify(d: Loaded & Pulled): Result<Staged<Identified>> {
  const { scope, agent, continuation, nonce } = d;
  const identity = scope.meta.identity ?? renderIdentity(redact(agent.systemPrompt).text, d.now, nonce);
  const switching = !continuation && scope.meta.personaAgent !== null && scope.meta.personaAgent !== agent.id;
  const personaHits: SecretHit[] = [];
  const admit = (text: string) => {
    const admitted = admitText(text, { nonce });
    personaHits.push(...admitted.hits);
    return admitted.text;
  };
  const personaNote = switching ? renderPersonaSwitch({ name: admit(agent.name), systemPrompt: admit(agent.systemPrompt) }, nonce) : undefined;
  return ok({ out: { identity, switching, personaNote, personaHits }, decided: { frozen: scope.meta.identity !== null, switching } });
}
