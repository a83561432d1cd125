"""Export the benchmark corpus with torch.onnx.export from random-weight models (no downloads).

  .venv/bin/pip install -r bench/requirements.txt
  .venv/bin/python bench/make_corpus.py [--out bench/corpus] [--only NAME ...]

Models: resnet50 (a hand-written ResNet-50), bert_base, gpt2_medium (transformers configs with
random init), llama_deep (a LLaMA-style decoder with 240 thin layers, >= 30,000 nodes, exported
by the dynamo exporter so scopes live in node metadata), big_external (an MLP of > 2.5 GiB,
weights in external data). Exports use the TorchScript exporter (names like
/encoder/layer.3/attention/...) unless noted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from torch import nn


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid)
        self.conv2, self.bn2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid)
        self.conv3, self.bn3 = nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (self.downsample(x) if self.downsample is not None else x))


class ResNet50(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1, self.relu = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], 64
        for mid, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
            seq = []
            for b in range(blocks):
                seq.append(Bottleneck(cin, mid, mid * 4, stride if b == 0 else 1))
                cin = mid * 4
            layers.append(nn.Sequential(*seq))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(2048, 1000)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class BigMLP(nn.Module):
    """10 x Linear(8192, 8192): 671 M float32 parameters, 2.5 GiB."""

    def __init__(self, width=8192, depth=10):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class FirstOutput(nn.Module):
    """A transformers model returning its first output tensor (logits / last hidden state)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids)[0]


def export(model, args, path: Path, names_in, names_out, dynamo=False, external=False, dynamic=None):
    model.eval()
    t0 = time.time()
    with torch.no_grad():
        torch.onnx.export(
            model,
            args,
            str(path),
            input_names=names_in,
            output_names=names_out,
            opset_version=18 if dynamo else 17,
            dynamo=dynamo,
            external_data=external,
            dynamic_axes=None if dynamo else dynamic,
            **({"optimize": False} if dynamo else {}),
        )  # the optimizer takes > 10 min on 30k nodes
    print(f"  {path.name}: {path.stat().st_size / 2**20:.1f} MiB in {time.time() - t0:.0f}s", flush=True)


def make(name: str, out: Path) -> None:
    torch.manual_seed(0)
    path = out / f"{name}.onnx"
    if name == "resnet50":
        export(ResNet50(), (torch.randn(1, 3, 224, 224),), path, ["image"], ["logits"], dynamic={"image": {0: "batch"}})
    elif name in ("bert_base", "gpt2_medium", "llama_deep"):
        import transformers as tf

        if name == "bert_base":
            model, vocab = tf.BertModel(tf.BertConfig()), 30522
        elif name == "gpt2_medium":
            model, vocab = tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=1024, n_layer=24, n_head=16, use_cache=False)), 50257
        else:
            cfg = tf.LlamaConfig(
                hidden_size=64,
                intermediate_size=128,
                num_hidden_layers=240,
                num_attention_heads=4,
                num_key_value_heads=2,
                vocab_size=1000,
                max_position_embeddings=256,
                use_cache=False,
            )
            model, vocab = tf.LlamaForCausalLM(cfg), 1000
        ids = torch.randint(0, vocab, (1, 16))
        export(
            FirstOutput(model),
            (ids,),
            path,
            ["input_ids"],
            ["output"],
            dynamo=(name in ("llama_deep", "gpt2_medium")),
            dynamic={"input_ids": {0: "batch", 1: "sequence"}},
        )
    elif name == "big_external":
        folder = out / "big_external"
        folder.mkdir(exist_ok=True)
        export(BigMLP(), (torch.randn(1, 8192),), folder / "big_external.onnx", ["x"], ["y"], external=True)
    else:
        raise SystemExit(f"unknown model {name}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "corpus")
    ap.add_argument("--only", nargs="*", default=["resnet50", "bert_base", "gpt2_medium", "llama_deep", "big_external"])
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    for name in args.only:
        print(f"exporting {name}", flush=True)
        make(name, args.out)


if __name__ == "__main__":
    main()
