// Device configurations (IR 11): the model's DeviceConfigurationProto list and a node's
// NodeDeviceConfigurationProto list with its sharding specs, as readable text. The API sends
// them as protobuf JSON (camelCase names, 64-bit integers as strings).
import { el } from "../widgets/dom.js";
import { mono, plural } from "../widgets/ui.js";

const list = (xs) => (xs || []).map(String);

/** The model's `configuration`: named device meshes. */
export function deviceConfigurations(configs) {
  return el("ul", { class: "device-list" }, (configs || []).map((c) => el("li", { "data-config": c.name || "" },
    el("div", {}, mono(c.name || "(unnamed)", "config-name"),
      el("span", { class: "muted" }, ` · ${plural(Number(c.numDevices || 0), "device")}`)),
    (c.device || []).length ? el("div", { class: "device-names" }, list(c.device).map((d, i) => [i ? ", " : "", mono(d)])) : null)));
}

function shardedDim(d) {
  const parts = (d.simpleSharding || []).map((s) => {
    const dim = s.dimValue !== undefined ? ` (size ${s.dimValue})` : s.dimParam ? ` (size ${s.dimParam})` : "";
    return `${dim} split into ${plural(Number(s.numShards || 0), "shard")}`;
  });
  return el("li", {}, `axis ${d.axis ?? 0}`, parts.length ? parts.join(", then") : ": not split");
}

function shardingSpec(spec) {
  const groups = spec.indexToDeviceGroupMap || [];
  return el("li", { class: "sharding-spec", "data-tensor": spec.tensorName || "" },
    el("div", {}, "tensor ", mono(spec.tensorName || "(unnamed)"), " on device", (spec.device || []).length === 1 ? " " : "s ",
      list(spec.device).join(", ") || "—"),
    groups.length ? el("div", { class: "muted" }, "device groups: ",
      groups.map((g, i) => [i ? "; " : "", `${g.key} → [${list(g.value).join(", ")}]`])) : null,
    (spec.shardedDim || []).length ? el("ul", { class: "sharded-dims" }, spec.shardedDim.map(shardedDim))
      : el("div", { class: "muted" }, "replicated (no axis is split)"));
}

/** A node's `device_configurations`. */
export function nodeDeviceConfigurations(configs) {
  return el("ul", { class: "device-list" }, (configs || []).map((c) => el("li", { "data-config": c.configurationId || "" },
    el("div", {}, "configuration ", mono(c.configurationId || "(none)"),
      c.pipelineStage !== undefined ? el("span", { class: "muted" }, ` · pipeline stage ${c.pipelineStage}`) : null),
    (c.shardingSpec || []).length ? el("ul", { class: "sharding-specs" }, c.shardingSpec.map(shardingSpec))
      : el("div", { class: "muted" }, "no sharding spec"))));
}
