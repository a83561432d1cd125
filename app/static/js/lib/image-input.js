// An image as a vision model's input: decoded and resized by the browser (createImageBitmap and
// a canvas), laid out as the input declares (NCHW, NHWC, CHW or HWC; 3 channels, or 1 for
// grey), scaled as the model was trained to read pixels (one of SCALINGS) and packed as a .npy,
// which a run feeds as it feeds any other.
import { buildNpy } from "./npy.js";

/** Largest side an image of free size is fed at: a 4000×3000 photo would be 36M values. */
export const IMAGE_MAX_SIDE = 1024;

/**
 * How pixels (0–255) become values: value = (pixel × scale − mean[c]) / std[c].
 * @type {Record<string, {label: string, scale: number, mean: number[], std: number[]}>}
 */
export const SCALINGS = {
  imagenet: { label: "0–1, then ImageNet mean/std (torchvision)", scale: 1 / 255, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] },
  unit: { label: "0–1", scale: 1 / 255, mean: [0, 0, 0], std: [1, 1, 1] },
  signed: { label: "−1–1 (TensorFlow, Inception)", scale: 1 / 127.5, mean: [1, 1, 1], std: [1, 1, 1] },
  raw: { label: "0–255 as they are", scale: 1, mean: [0, 0, 0], std: [1, 1, 1] },
};

/** How an image of other proportions is fitted to the input's size. */
export const FITS = {
  cover: "crop the centre (keeps proportions)",
  letterbox: "pad the sides (keeps proportions, YOLO's letterbox)",
  stretch: "stretch",
};
// the grey a letterbox pads with, and the multiple a free side is padded to (Ultralytics' YOLO:
// 114, 114, 114 and its largest stride, 32)
const LETTERBOX_GREY = "rgb(114, 114, 114)";
const LETTERBOX_STRIDE = 32;

const FLOATS = new Set(["FLOAT", "FLOAT16", "DOUBLE", "BFLOAT16"]);

/**
 * @typedef {{layout: string, channels: number, batch: boolean, hAxis: number, wAxis: number}} ImageLayout
 */

/**
 * How an input takes an image, or null when its declared type is no image's: a float or uint8
 * tensor of rank 4 (a batch of one first) or 3 whose channel axis is a fixed 3 (or 1, of rank
 * 4), first after the batch (NCHW, CHW) or last (NHWC, HWC), and whose height and width are free
 * or at least 8.
 * @param {{dtype?: string, shape?: unknown[] | null}} input
 * @returns {ImageLayout | null}
 */
export function imageLayout(input) {
  const shape = input.shape;
  if (!Array.isArray(shape) || !(FLOATS.has(input.dtype || "") || input.dtype === "UINT8")) return null;
  // one channel (grey) only after a batch: a [1, 128, 768] of rank 3 is a sentence's hidden states
  const channel = (/** @type {unknown} */ d) => d === 3 || (d === 1 && shape.length === 4);
  const side = (/** @type {unknown} */ d) => typeof d !== "number" || d >= 8;
  const batch = shape.length === 4;
  if (!batch && shape.length !== 3) return null;
  if (batch && typeof shape[0] === "number" && shape[0] !== 1) return null; // a batch of several: not one image
  const at = batch ? 1 : 0;
  if (channel(shape[at]) && side(shape[at + 1]) && side(shape[at + 2])) {
    return { layout: batch ? "NCHW" : "CHW", channels: Number(shape[at]), batch, hAxis: at + 1, wAxis: at + 2 };
  }
  const last = shape.length - 1;
  if (channel(shape[last]) && side(shape[at]) && side(shape[at + 1])) {
    return { layout: batch ? "NHWC" : "HWC", channels: Number(shape[last]), batch, hAxis: at, wAxis: at + 1 };
  }
  return null;
}

/**
 * @typedef {{ultralytics: boolean, size: {height: number, width: number} | null, stride: number}} ExportHints
 */

/** What a model's metadata_props say of the images it was exported for. An Ultralytics export
 * (author "Ultralytics") writes its `imgsz` ("[640, 640]", or "640") and `stride` ("32"): its own
 * predictor letterboxes every image to imgsz, also where the export left the sides free.
 * @param {{key: string, value: string}[] | undefined} props
 * @returns {ExportHints} */
export function exportHints(props) {
  const meta = new Map((props || []).map((p) => [p.key, p.value]));
  const ultralytics = /ultralytics/i.test(meta.get("author") || "");
  const sides = ultralytics ? (meta.get("imgsz") || "").match(/\d+/g) : null;
  const size = sides && sides.length >= 1 && sides.length <= 2 && sides.every((d) => Number(d) >= 8 && Number(d) <= 8192)
    ? { height: Number(sides[0]), width: Number(sides[sides.length - 1]) }
    : null;
  const stride = ultralytics ? Number(meta.get("stride")) : NaN;
  return { ultralytics, size, stride: Number.isInteger(stride) && stride > 0 && stride <= 256 ? stride : LETTERBOX_STRIDE };
}

/** No metadata: an image's size from the input alone. */
export const NO_HINTS = Object.freeze({ ultralytics: false, size: null, stride: LETTERBOX_STRIDE });

/** Whether the input is an Ultralytics YOLO export's: its metadata says so, or a float input
 * named "images", as YOLOv5/v8/11 name theirs. They read 0–1 pixels, letterboxed (QA43 #5:
 * ImageNet's mean/std and a centre crop fed them what they never saw). */
function ultralytics(input, hints) {
  return input.dtype !== "UINT8" && (hints.ultralytics || input.name === "images");
}

/** The scaling a model of this input most likely reads: uint8 pixels as they are, a YOLO's
 * 0–1, other floats as torchvision's models do (the most exported).
 * @param {{name?: string, dtype?: string}} input
 * @param {ExportHints} [hints] */
export function defaultScaling(input, hints = NO_HINTS) {
  if (input.dtype === "UINT8") return "raw";
  return ultralytics(input, hints) ? "unit" : "imagenet";
}

/** How an image is most likely fitted for this input: a YOLO's letterbox, else a centre crop.
 * @param {{name?: string, dtype?: string}} input
 * @param {ExportHints} [hints] */
export function defaultFit(input, hints = NO_HINTS) {
  return ultralytics(input, hints) ? "letterbox" : "cover";
}

/** The scale an image is fed at where the input leaves its size free: its own, its longer side
 * at most IMAGE_MAX_SIDE. */
function ownScale(natural) {
  return Math.min(1, IMAGE_MAX_SIDE / Math.max(natural.width, natural.height));
}

/** The size an image is fed at: the input's fixed height and width; where both are free, the
 * size the model was exported for (its metadata's, `hints`), else the image's own (ownScale,
 * `own` then true); letterboxed, a side of free size padded up to a multiple of the stride.
 * @param {unknown[]} shape
 * @param {ImageLayout} layout
 * @param {{width: number, height: number}} natural
 * @param {string} [fit]
 * @param {ExportHints} [hints]
 * @returns {{height: number, width: number, own: boolean}} */
export function targetSize(shape, layout, natural, fit = "cover", hints = NO_HINTS) {
  const h = shape[layout.hAxis];
  const w = shape[layout.wAxis];
  const fixedH = typeof h === "number" && h > 0 ? h : null;
  const fixedW = typeof w === "number" && w > 0 ? w : null;
  if (fixedH && fixedW) return { height: fixedH, width: fixedW, own: false };
  if (!fixedH && !fixedW && hints.size) return { ...hints.size, own: false };
  // a letterbox of free size pads a side the image leaves short of a multiple of the network's
  // stride: a YOLO of free height and width fed an 800×600 photo failed at its first Concat (QA44 #2)
  const free = (/** @type {number} */ side) => (fit === "letterbox" ? Math.ceil(side / hints.stride) * hints.stride : side);
  // one side fixed: the other keeps the image's proportions
  if (fixedH) return { height: fixedH, width: free(Math.max(1, Math.round((natural.width * fixedH) / natural.height))), own: false };
  if (fixedW) return { height: free(Math.max(1, Math.round((natural.height * fixedW) / natural.width))), width: fixedW, own: false };
  const shrink = ownScale(natural);
  const ownW = Math.max(1, Math.round(natural.width * shrink));
  const ownH = Math.max(1, Math.round(natural.height * shrink));
  return { height: free(ownH), width: free(ownW), own: true };
}

/**
 * The values of RGBA pixels (`rgba`, row-major, 4 bytes a pixel) as the input takes them.
 * @param {Uint8ClampedArray | Uint8Array} rgba
 * @param {number} height
 * @param {number} width
 * @param {ImageLayout} layout
 * @param {{scaling: string, bgr: boolean, whole: boolean}} how
 */
export function pixelValues(rgba, height, width, layout, how) {
  const s = SCALINGS[how.scaling] || SCALINGS.raw;
  const c = layout.channels;
  const size = height * width;
  const out = how.whole ? new Uint8Array(c * size) : new Float32Array(c * size);
  const planar = layout.layout === "NCHW" || layout.layout === "CHW";
  // grey: luminance (ITU-R BT.601), normalised by the channels' mean mean and std
  const greyMean = (s.mean[0] + s.mean[1] + s.mean[2]) / 3;
  const greyStd = (s.std[0] + s.std[1] + s.std[2]) / 3;
  for (let p = 0; p < size; p += 1) {
    const r = rgba[4 * p];
    const g = rgba[4 * p + 1];
    const b = rgba[4 * p + 2];
    for (let k = 0; k < c; k += 1) {
      let pixel;
      let mean;
      let std;
      if (c === 1) {
        pixel = 0.299 * r + 0.587 * g + 0.114 * b;
        [mean, std] = [greyMean, greyStd];
      } else {
        const from = how.bgr ? 2 - k : k;
        pixel = from === 0 ? r : from === 1 ? g : b;
        [mean, std] = [s.mean[k], s.std[k]];
      }
      const value = how.whole ? Math.round(pixel) : (pixel * s.scale - mean) / std;
      out[planar ? k * size + p : p * c + k] = value;
    }
  }
  return out;
}

/**
 * Decode `file`, resize it as `fit` says, and give the .npy the input takes, its shape, the size
 * it was fed at and a PNG of what was fed (a data: URL, for the page to show).
 * @param {Blob} file
 * @param {{dtype?: string, shape?: unknown[] | null}} input
 * @param {ImageLayout} layout
 * @param {{scaling: string, bgr: boolean, fit: string}} how
 * @param {ExportHints} [hints]
 */
export async function imageInput(file, input, layout, how, hints = NO_HINTS) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch (err) {
    throw new Error(`${/** @type {File} */ (file).name || "The file"} is no image the browser can read`, { cause: err });
  }
  const shape = input.shape || [];
  const natural = { width: bitmap.width, height: bitmap.height };
  const { height, width, own } = targetSize(shape, layout, natural, how.fit, hints);
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const draw = canvas.getContext("2d");
  if (!draw) throw new Error("The browser can't draw the image");
  draw.imageSmoothingQuality = "high";
  let [sx, sy, sw, sh] = [0, 0, bitmap.width, bitmap.height];
  let [dx, dy, dw, dh] = [0, 0, width, height];
  if (how.fit === "cover") { // the largest centred crop of the target's proportions
    const scale = Math.max(width / bitmap.width, height / bitmap.height);
    sw = Math.min(bitmap.width, width / scale);
    sh = Math.min(bitmap.height, height / scale);
    sx = (bitmap.width - sw) / 2;
    sy = (bitmap.height - sh) / 2;
  } else if (how.fit === "letterbox") { // the whole image as large as it fits, centred, grey around
    // (at its own size: the image as it is, the sides only padded to the stride)
    const scale = Math.min(width / bitmap.width, height / bitmap.height, own ? ownScale(natural) : Infinity);
    dw = Math.round(bitmap.width * scale);
    dh = Math.round(bitmap.height * scale);
    dx = Math.floor((width - dw) / 2);
    dy = Math.floor((height - dh) / 2);
    draw.fillStyle = LETTERBOX_GREY;
    draw.fillRect(0, 0, width, height);
  }
  draw.drawImage(bitmap, sx, sy, sw, sh, dx, dy, dw, dh);
  bitmap.close();
  const whole = input.dtype === "UINT8";
  const values = pixelValues(draw.getImageData(0, 0, width, height).data, height, width, layout, { ...how, whole });
  const dims = layout.layout.startsWith("N") ? [1] : [];
  const c = layout.channels;
  dims.push(...(layout.layout.endsWith("HWC") ? [height, width, c] : [c, height, width]));
  // float16 and double inputs take float32 values: the server feeds them in the declared width
  return { bytes: buildNpy(whole ? "UINT8" : "FLOAT", dims, values), shape: dims, height, width, preview: canvas.toDataURL("image/png") };
}
