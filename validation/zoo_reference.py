#!/usr/bin/python3
"""Reference figures for commsim's model zoo (tests/test_jobs.c,
docs/training.md): parameter tables, per-layer forward FLOPs, PyTorch DDP's
bucket assignment (and a real single-process DDP run that rebuilds its
buckets), and BERT-large / GPT-2 XL parameter counts.

Needs Debian's python3-torch and python3-torchvision (torch 1.13):
    apt-get install -y python3-torch python3-torchvision
    /usr/bin/python3 validation/zoo_reference.py [OUTDIR]   (default /tmp/zoo-reference)
Not run by the test suite."""
import os, socket, sys
import torch
import torch.nn as nn
import torch.distributed as dist
import torchvision

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/zoo-reference"
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)
print("torch", torch.__version__, "torchvision", torchvision.__version__)


def build(name):
    return getattr(torchvision.models, name)(weights=None, num_classes=1000)


# ---------------------------------------------------------------- a. params
def params_csv(name, model):
    total = 0
    with open(f"{OUT}/{name}_params.csv", "w") as f:
        f.write("index,name,numel,shape\n")
        for i, (n, p) in enumerate(model.named_parameters()):
            f.write(f"{i},{n},{p.numel()},{'x'.join(map(str, p.shape))}\n")
            total += p.numel()
    n_t = len(list(model.parameters()))
    print(f"[a] {name}: {n_t} tensors, total params = {total:,}")
    return total


# ---------------------------------------------------------------- b. FLOPs
# Conv2d: 2*(Cin/groups)*kh*kw*Cout*Hout*Wout (bias adds NOT counted)
# Linear: 2*in*out (bias adds NOT counted)
# BatchNorm2d: listed with flops=0 (counted as 0 in the main total);
#   an alternative total with BN = 2*numel(output) is printed as well.
def flops_csv(name, model):
    rows = []

    def hook(mod_name):
        def f(m, inp, out):
            if isinstance(m, nn.Conv2d):
                cout, cin_g, kh, kw = m.weight.shape
                _, _, ho, wo = out.shape
                fl = 2 * cin_g * kh * kw * cout * ho * wo
                kind = "Conv2d"
            elif isinstance(m, nn.Linear):
                fl = 2 * m.in_features * m.out_features * (out.numel() // m.out_features)
                kind = "Linear"
            else:
                fl = 0
                kind = "BatchNorm2d"
            rows.append((mod_name, kind, fl, "x".join(map(str, out.shape)), out.numel()))
        return f

    hs = [m.register_forward_hook(hook(n)) for n, m in model.named_modules()
          if isinstance(m, (nn.Conv2d, nn.Linear, nn.BatchNorm2d))]
    model.eval()
    with torch.no_grad():
        model(torch.randn(1, 3, 224, 224))
    for h in hs:
        h.remove()
    with open(f"{OUT}/{name}_flops.csv", "w") as f:
        f.write("module,kind,flops,out_shape\n")
        for r in rows:
            f.write(f"{r[0]},{r[1]},{r[2]},{r[3]}\n")
    conv = sum(r[2] for r in rows if r[1] == "Conv2d")
    lin = sum(r[2] for r in rows if r[1] == "Linear")
    bn_alt = sum(2 * r[4] for r in rows if r[1] == "BatchNorm2d")
    tot = conv + lin
    print(f"[b] {name}: conv {conv:,} + linear {lin:,} = {tot:,} FLOPs "
          f"({tot/1e9:.3f} GFLOP = {tot/2e9:.3f} GMAC); BN counted 0. "
          f"If BN = 2*numel(out): +{bn_alt:,} -> {tot+bn_alt:,} ({(tot+bn_alt)/1e9:.3f} GFLOP)")
    return tot


# ---------------------------------------------------------------- c. buckets
def bucket_table(names, tensors, bucket_indices, limits, header):
    lines = [header,
             f"size limits passed: [{dist._DEFAULT_FIRST_BUCKET_BYTES}, {25*1024*1024}] bytes; "
             f"{len(bucket_indices)} buckets; tensor indices refer to the reversed list",
             "bucket,n_tensors,numel,bytes,limit_bytes,first_idx,last_idx,first_name,last_name"]
    for b, (idx, lim) in enumerate(zip(bucket_indices, limits)):
        ne = sum(tensors[i].numel() for i in idx)
        by = sum(tensors[i].numel() * tensors[i].element_size() for i in idx)
        lines.append(f"{b},{len(idx)},{ne},{by},{lim},{idx[0]},{idx[-1]},{names[idx[0]]},{names[idx[-1]]}")
    return lines


def buckets(name, model):
    named = list(model.named_parameters())
    rev = list(reversed(named))
    names = [n for n, _ in rev]
    tensors = [p.detach() for _, p in rev]   # fp32 -> 4 bytes/elem
    bi, lim = dist._compute_bucket_assignment_by_size(
        tensors, [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 1024 * 1024], [False] * len(tensors))
    lines = bucket_table(names, tensors, bi, lim,
                         f"# {name}: _compute_bucket_assignment_by_size(reversed(params), "
                         f"[_DEFAULT_FIRST_BUCKET_BYTES, 25MiB], [False]*{len(tensors)})")
    with open(f"{OUT}/{name}_buckets.txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return bi, names


# ---------------------------------------------------------------- c'. real DDP
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def ddp_check(rev_names, expected_bi):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    dist.init_process_group("gloo", rank=0, world_size=1)
    model = build("resnet50")
    pname = {p: n for n, p in model.named_parameters()}

    # record the actual order in which gradients are accumulated
    ready = []
    for n, p in model.named_parameters():
        p.register_hook(lambda g, n=n: ready.append(n) or g)

    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=25)

    # comm hook records the bucket structure of every allreduce
    seen = {}

    def hook(state, bucket):
        it = state["it"]
        seen.setdefault(it, []).append(
            (bucket.index(), [pname[p] for p in bucket.parameters()],
             bucket.buffer().numel()))
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    state = {"it": 0}
    ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.0)
    def dump_logging(when):
        data = ddp._get_ddp_logging_data()
        print(f"[c-ddp] _get_ddp_logging_data() keys containing 'bucket' ({when}):")
        for k in sorted(data):
            if "bucket" in k.lower():
                print(f"  {k} = {data[k]!r}")

    # iterations 0,1 = the 2 requested; iteration 2 only refreshes the logger
    # (Logger.set_runtime_stats_and_log runs at the start of forward, before the
    # rebuild that happens in the same forward, so rebuilt stats appear one step later)
    for it in range(3):
        if it == 2:
            dump_logging("after 2 iterations")
        state["it"] = it
        ready.clear()
        out = ddp(torch.randn(2, 3, 224, 224))
        loss = nn.functional.cross_entropy(out, torch.randint(0, 1000, (2,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it == 2:
            continue
        lines = [f"[c-ddp] iteration {it}: {len(seen[it])} buckets reduced (via comm hook)"]
        for bidx, ns, ne in sorted(seen[it]):
            lines.append(f"  bucket {bidx}: {len(ns)} tensors, {ne} elems, {4*ne} bytes, "
                         f"first={ns[0]} last={ns[-1]}")
        print("\n".join(lines))
    dump_logging("after a 3rd iteration")
    rev_registration = [n for n, _ in reversed(list(model.named_parameters()))]
    print(f"[c-ddp] grad-ready order (iteration 1) == reversed registration order: "
          f"{ready == rev_registration}")
    if ready != rev_registration:
        diffs = [(i, a, b) for i, (a, b) in enumerate(zip(ready, rev_registration)) if a != b]
        print(f"  {len(diffs)} positions differ; first few: {diffs[:6]}")
    # compare it-1 buckets (after rebuild) with the formula result
    exp = [[rev_names[i] for i in idx] for idx in expected_bi]
    got = [ns for _, ns, _ in sorted(seen[1])]
    print(f"[c-ddp] iteration-1 bucket membership == _compute_bucket_assignment_by_size "
          f"result (as sets per bucket): {[set(a) for a in exp] == [set(b) for b in got]}")
    dist.destroy_process_group()


# ---------------------------------------------------------------- d. transformers
def bert_large():
    V, H, L, P, T, F = 30522, 1024, 24, 512, 2, 4096
    emb = [("embeddings.word_embeddings.weight", V * H), ("embeddings.position_embeddings.weight", P * H),
           ("embeddings.token_type_embeddings.weight", T * H), ("embeddings.LayerNorm.weight", H),
           ("embeddings.LayerNorm.bias", H)]
    blk = [("attention.self.query.weight", H * H), ("attention.self.query.bias", H),
           ("attention.self.key.weight", H * H), ("attention.self.key.bias", H),
           ("attention.self.value.weight", H * H), ("attention.self.value.bias", H),
           ("attention.output.dense.weight", H * H), ("attention.output.dense.bias", H),
           ("attention.output.LayerNorm.weight", H), ("attention.output.LayerNorm.bias", H),
           ("intermediate.dense.weight", H * F), ("intermediate.dense.bias", F),
           ("output.dense.weight", F * H), ("output.dense.bias", H),
           ("output.LayerNorm.weight", H), ("output.LayerNorm.bias", H)]
    pool = [("pooler.dense.weight", H * H), ("pooler.dense.bias", H)]
    e, b, p = (sum(x for _, x in t) for t in (emb, blk, pool))
    tot = e + L * b + p
    print(f"[d] BERT-large (BertModel, vocab 30522, H=1024, L=24, 16 heads, ffn 4096, 512 pos, 2 types, pooler)")
    print(f"    embeddings {e:,}; per layer {b:,} x 24 = {L*b:,}; pooler {p:,}; TOTAL = {tot:,}")
    print("    one encoder layer (encoder.layer.N.*):")
    for n, x in blk:
        print(f"      {n:40s} {x:>10,}")
    return tot, b


def gpt2_xl():
    V, D, L, P = 50257, 1600, 48, 1024
    emb = [("wte.weight (tied with lm_head)", V * D), ("wpe.weight", P * D)]
    blk = [("ln_1.weight", D), ("ln_1.bias", D),
           ("attn.c_attn.weight", D * 3 * D), ("attn.c_attn.bias", 3 * D),
           ("attn.c_proj.weight", D * D), ("attn.c_proj.bias", D),
           ("ln_2.weight", D), ("ln_2.bias", D),
           ("mlp.c_fc.weight", D * 4 * D), ("mlp.c_fc.bias", 4 * D),
           ("mlp.c_proj.weight", 4 * D * D), ("mlp.c_proj.bias", D)]
    fin = [("ln_f.weight", D), ("ln_f.bias", D)]
    e, b, f = (sum(x for _, x in t) for t in (emb, blk, fin))
    tot = e + L * b + f
    print(f"[d] GPT-2 XL (48 layers, d=1600, vocab 50257, 1024 pos, tied embeddings)")
    print(f"    embeddings {e:,}; per block {b:,} x 48 = {L*b:,}; ln_f {f:,}; TOTAL = {tot:,}")
    print("    one block (h.N.*):")
    for n, x in blk:
        print(f"      {n:40s} {x:>10,}")
    return tot, b


def check_blocks(bert_b, gpt_b):
    # cross-check the per-block formula by instantiating equivalent torch modules
    H, F = 1024, 4096
    bert = nn.ModuleList([nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H),
                          nn.LayerNorm(H), nn.Linear(H, F), nn.Linear(F, H), nn.LayerNorm(H)])
    D = 1600
    gpt = nn.ModuleList([nn.LayerNorm(D), nn.Linear(D, 3 * D), nn.Linear(D, D), nn.LayerNorm(D),
                         nn.Linear(D, 4 * D), nn.Linear(4 * D, D)])
    cb = sum(p.numel() for p in bert.parameters())
    cg = sum(p.numel() for p in gpt.parameters())
    print(f"[d] block cross-check with nn modules: BERT {cb:,} ({cb == bert_b}), GPT-2 XL {cg:,} ({cg == gpt_b})")


if __name__ == "__main__":
    results = {}
    for name in ("resnet50", "vgg16"):
        m = build(name)
        results[name] = params_csv(name, m)
    assert results["resnet50"] == 25_557_032 and results["vgg16"] == 138_357_544
    for name in ("resnet50", "vgg16"):
        flops_csv(name, build(name))
    for name in ("resnet50", "vgg16"):
        bi, names = buckets(name, build(name))
        if name == "resnet50":
            rn_bi, rn_names = bi, names
    try:
        ddp_check(rn_names, rn_bi)
    except Exception as e:
        import traceback; traceback.print_exc()
        print("[c-ddp] DDP check failed:", e)
    bt, bb = bert_large()
    gt, gb = gpt2_xl()
    check_blocks(bb, gb)
