// Size fields of the inputs' dynamic dims (the Costs form, the Run panel). An unnamed first axis
// is asked by input and axis ("a[0]", "b[0]": scikit-learn exports leave every input's batch
// unnamed), so a model of three inputs asks its one batch three times: those fields follow the
// one typed into, until a field is typed into itself.

const FIRST_AXIS = /\[0\]$/;

/** Link the unnamed-first-axis fields among `fields` (named by their aria-label). */
export function followFirstAxes(fields) {
  const firsts = fields.filter((f) => FIRST_AXIS.test(f.getAttribute("aria-label") || ""));
  if (firsts.length < 2) return;
  const own = new Set(); // fields the person typed into: they keep their own size
  for (const field of firsts) {
    field.title = "Follows the other inputs' first axis until you type a size of its own";
    field.addEventListener("input", () => {
      own.add(field);
      field.title = "";
      for (const other of firsts) if (!own.has(other)) other.value = field.value;
    });
  }
}
