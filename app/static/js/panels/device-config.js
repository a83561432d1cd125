// Device configurations (IR 11): the model's DeviceConfigurationProto list and a node's
// NodeDeviceConfigurationProto list with its sharding specs, as readable text. The API sends
// them with onnx.proto's field names and integers as numbers (views/message_json.py).
import { el } from "../widgets/dom.js";
import { mono, plural } from "../widgets/ui.js";

const list = (xs) => (xs || []).map(String);

/** The model's `configuration`: named device meshes. */
export function deviceConfigurations(configs) {
  return el("ul", { class: "device-list" }, (configs || []).map((c) => el("li", { "data-config": c.name || "" },
    el("div", {}, mono(c.name || "(unnamed)", "config-name"),
      el("span", { class: "muted" }, ` · ${plural(Number(c.num_devices || 0), "device")}`)),
    (c.device || []).length ? el("div", { class: "device-names" }, list(c.device).map((d, i) => [i ? ", " : "", mono(d)])) : null)));
}

function sharded_dim(d) {
  const parts = (d.simple_sharding || []).map((s) => {
    const dim = s.dim_value !== undefined ? ` (size ${s.dim_value})` : s.dim_param ? ` (size ${s.dim_param})` : "";
    return `${dim} split into ${plural(Number(s.num_shards || 0), "shard")}`;
  });
  return el("li", {}, `axis ${d.axis ?? 0}`, parts.length ? parts.join(", then") : ": not split");
}

function sharding_spec(spec) {
  const groups = spec.index_to_device_group_map || [];
  return el("li", { class: "sharding-spec", "data-tensor": spec.tensor_name || "" },
    el("div", {}, "tensor ", mono(spec.tensor_name || "(unnamed)"), " on device", (spec.device || []).length === 1 ? " " : "s ",
      list(spec.device).join(", ") || "—"),
    groups.length ? el("div", { class: "muted" }, "device groups: ",
      groups.map((g, i) => [i ? "; " : "", `${g.key} → [${list(g.value).join(", ")}]`])) : null,
    (spec.sharded_dim || []).length ? el("ul", { class: "sharded-dims" }, spec.sharded_dim.map(sharded_dim))
      : el("div", { class: "muted" }, "replicated (no axis is split)"));
}

/** A node's `device_configurations`. */
export function nodeDeviceConfigurations(configs) {
  return el("ul", { class: "device-list" }, (configs || []).map((c) => el("li", { "data-config": c.configuration_id || "" },
    el("div", {}, "configuration ", mono(c.configuration_id || "(none)"),
      c.pipeline_stage !== undefined ? el("span", { class: "muted" }, ` · pipeline stage ${c.pipeline_stage}`) : null),
    (c.sharding_spec || []).length ? el("ul", { class: "sharding-specs" }, c.sharding_spec.map(sharding_spec))
      : el("div", { class: "muted" }, "no sharding spec"))));
}
