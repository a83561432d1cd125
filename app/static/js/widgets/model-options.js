// Other stored models offered in a "compare with" list (the Compare and Run panels): each named
// as the models page names it, its id beside a name another stored model has too (the same
// export uploaded again, edited apart), with the revision compared with and when it came.
import { el } from "./dom.js";
import { shortDate } from "../lib/format.js";

/** name -> how many of `models` have it. */
export function twinsOf(models) {
  const twins = new Map();
  for (const m of models) twins.set(m.name, (twins.get(m.name) || 0) + 1);
  return twins;
}

/** The option for model `m` (value `model:<id>`); `twins` as twinsOf makes it, of every stored model. */
export function modelOption(m, twins) {
  const id = twins.get(m.name) > 1 ? ` · ${m.id}` : "";
  const when = m.created ? ` · uploaded ${shortDate(m.created)}` : "";
  return el("option", { value: `model:${m.id}`, title: `model ${m.id}, revision ${m.revision}${when}` },
    `${m.name || m.id}${id} · revision ${m.revision}${when}`);
}
