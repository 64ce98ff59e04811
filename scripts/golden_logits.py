#!/usr/bin/env python3
"""Golden logits: transformers' forward pass on seed's real-shape test models.

For each tests/models/golden/NAME.config.json, builds the model in
transformers with the weights of tests/tools/portable_weights.cpp (the same
generator, bit for bit, so no weight file travels), runs one token sequence
on every device asked for, and writes NAME.logits.json: per position the
argmax, the log-sum-exp and the logits of a fixed set of probe tokens.
tests/models/golden_logits_test.cpp checks seed against those files.

Needs torch, transformers (4.51 or later for Qwen3) and numpy (a GPU
machine's Python, not seed's build):
  python3 scripts/golden_logits.py --configs tests/models/golden --out DIR [--devices cpu,cuda] [--only NAME,...]
      [--dtype bfloat16]
--only writes just the named fixtures (say, qwen3) and leaves the others as
they are. --dtype bfloat16 runs the model in bfloat16 and writes
NAME.bfloat16.logits.json (use --devices cuda: the GPU is what runs it).
"""
import argparse
import copy
import glob
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import transformers

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
SEED = 0
POSITIONS = 40
PROBES = 24


def splitmix64(x):
    z = (x + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


def scale_of(name, shape):
    """(offset, scale) of a parameter, as portable_tensor() chooses them."""
    if "norm" in name:
        return 1.0, 0.2
    if name.endswith(".bias"):
        return 0.0, 0.5
    if "embed_tokens" in name:
        return 0.0, 1.0
    return 0.0, math.sqrt(3.0 / shape[1])


def portable_array(name, shape, seed):
    offset, scale = scale_of(name, shape)
    key = fnv1a64(name) ^ ((seed * GOLDEN) & MASK)
    n = math.prod(shape)
    with np.errstate(over="ignore"):
        z = np.arange(n, dtype=np.uint64) + np.uint64(key) + np.uint64(GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) * 2.0**-24
    values = (offset + scale * (2.0 * u - 1.0)).astype(np.float32)
    # The vectorised generator must equal the scalar definition.
    for i in range(min(n, 16)):
        ui = (splitmix64((key + i) & MASK) >> 40) * 2.0**-24
        expected = np.float32(offset + scale * (2.0 * ui - 1.0))
        assert values[i] == expected, (name, i, values[i], expected)
    return values.reshape(shape)


def token_ids(vocab, bos):
    key = fnv1a64("input")
    return [bos] + [splitmix64((key + i) & MASK) % vocab for i in range(1, POSITIONS)]


def probe_ids(vocab):
    key = fnv1a64("probe")
    ids = {0, 1, vocab // 2, vocab - 1}
    i = 0
    while len(ids) < PROBES:
        ids.add(splitmix64((key + i) & MASK) % vocab)
        i += 1
    return sorted(ids)


def run(model, ids, probes, device, dtype):
    model = copy.deepcopy(model).to(device=device, dtype=dtype)
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=device)).logits[0].double().cpu()
    return {
        "device_name": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "argmax": logits.argmax(-1).tolist(),
        "logsumexp": logits.logsumexp(-1).tolist(),
        "probe_logits": logits[:, probes].tolist(),
    }


def golden(config_path, devices, dtype):
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(config_path, os.path.join(folder, "config.json"))
        config = transformers.AutoConfig.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").float().eval()
    parameters = {}
    with torch.no_grad():
        for name, p in model.named_parameters():  # tied weights once
            p.copy_(torch.from_numpy(portable_array(name, list(p.shape), SEED)))
            parameters[name] = list(p.shape)
    with open(config_path) as f:
        raw = json.load(f)
    bos = raw["bos_token_id"]
    ids, probes = token_ids(config.vocab_size, bos), probe_ids(config.vocab_size)
    rotary = getattr(model.model, "rotary_emb", None)
    if rotary is not None:
        print(f"  inv_freq {rotary.inv_freq.tolist()}", flush=True)
    return {
        "config": os.path.basename(config_path),
        "seed": SEED,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "parameters": parameters,
        "input_ids": ids,
        "probe_ids": probes,
        "dtype": str(dtype).replace("torch.", ""),
        "devices": {device: run(model, ids, probes, device, dtype) for device in devices},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", required=True, help="folder of NAME.config.json files")
    parser.add_argument("--out", required=True, help="folder for NAME.logits.json")
    parser.add_argument("--devices", default="cpu,cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--only", default="", help="comma-separated NAMEs (default: every config)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                        help="the model's dtype; bfloat16 writes NAME.bfloat16.logits.json")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    paths = sorted(glob.glob(os.path.join(args.configs, "*.config.json")))
    if args.only:
        names = args.only.split(",")
        paths = [p for p in paths if os.path.basename(p).split(".")[0] in names]
        if len(paths) != len(names):
            sys.exit(f"golden_logits: --only {args.only}: not every NAME has a config in {args.configs}")
    if not paths:
        sys.exit(f"golden_logits: no *.config.json in {args.configs}")
    for path in paths:
        name = os.path.basename(path).split(".")[0]
        print(f"{name}: transformers {transformers.__version__}, devices {args.devices}", flush=True)
        dtype = getattr(torch, args.dtype)
        fixture = golden(path, args.devices.split(","), dtype)
        suffix = "" if args.dtype == "float32" else f".{args.dtype}"
        out = os.path.join(args.out, f"{name}{suffix}.logits.json")
        with open(out, "w") as f:
            json.dump(fixture, f, indent=1)
            f.write("\n")
        cpu = fixture["devices"].get("cpu")
        for device, values in fixture["devices"].items():
            if cpu and device != "cpu":
                gap = max(abs(a - b) for ra, rb in zip(values["probe_logits"], cpu["probe_logits"])
                          for a, b in zip(ra, rb))
                print(f"  {device} vs cpu: max probe logit difference {gap:.3g}", flush=True)
        print(f"  wrote {out}", flush=True)


if __name__ == "__main__":
    main()
