"""Public API surface of a module tree, and its diff against another.

  python tools/mxnet_unittests/api_surface.py dump mxnet OUT.json      (run in MXNet 1.9.1's venv)
  python tools/mxnet_unittests/api_surface.py check OUT.json [ALIASDIR] [--exclude SUBSTR,...]
        (run in aiond's venv; ALIASDIR holds the `mxnet` alias package; prints
        coverage and the missing names; --exclude leaves out modules whose
        name contains one of the substrings, e.g. numpy,onnx)

A name is `module:attr` or `module:Class.method` (public, not starting with _).
Modules that fail to import on the reference side are skipped.
"""
import importlib, inspect, json, pkgutil, sys, warnings

SKIP = ("mxnet.tvmop", "mxnet.libinfo", "mxnet._ctypes", "mxnet._cy3", "mxnet.cython",
        "mxnet._ffi", "mxnet.space", "mxnet.torch", "mxnet.rtc", "mxnet.kvstore_server",
        "mxnet.predictor", "mxnet.contrib.tensorrt", "mxnet.onnx.setup")


def dump(root, out):
    warnings.simplefilter("ignore")
    pkg = importlib.import_module(root)
    mods = {root: pkg}
    for info in pkgutil.walk_packages(pkg.__path__, root + "."):
        name = info.name
        if any(p.startswith("_") for p in name.split(".")[1:]) or name.startswith(SKIP):
            continue
        try:
            mods[name] = importlib.import_module(name)
        except Exception as e:  # noqa
            print("skip", name, type(e).__name__, str(e)[:80], file=sys.stderr)
    # every public class/function is counted once: where it is defined when
    # that module is public, else at its shortest public path
    found = {}  # ident -> [(path, obj)]
    names = {}
    for mname, m in sorted(mods.items(), key=lambda kv: (kv[0].count("."), len(kv[0]), kv[0])):
        if ".gen_" in mname or mname.endswith("_internal"):
            continue
        public = getattr(m, "__all__", None) or [n for n in dir(m) if not n.startswith("_")]
        for n in public:
            try:
                obj = getattr(m, n)
            except Exception:
                continue
            if inspect.ismodule(obj):
                if getattr(obj, "__name__", "").startswith(root):
                    names[f"{mname}:{n}"] = "module"
                continue
            om = getattr(obj, "__module__", "") or ""
            if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
                if not om.startswith(root):
                    continue  # re-exported from numpy etc.
                found.setdefault((om, getattr(obj, "__qualname__", n)), []).append((mname, n, obj))
            elif n.isupper():
                names[f"{mname}:{n}"] = "value"
    for (om, qn), paths in found.items():
        mname, n, obj = next((p for p in paths if p[0] == om), paths[0])
        names[f"{mname}:{n}"] = "class" if inspect.isclass(obj) else "function"
        if inspect.isclass(obj):
            for a, v in vars(obj).items():
                if not a.startswith("_") and (callable(v) or isinstance(v, property)):
                    names[f"{mname}:{n}.{a}"] = "method"
    json.dump(names, open(out, "w"), indent=0, sort_keys=True)
    print(len(mods), "modules,", len(names), "names")


def check(ref, alias_dir=None, exclude=()):
    warnings.simplefilter("ignore")
    if alias_dir:
        sys.path.insert(0, alias_dir)
    names = json.load(open(ref))
    names = {k: v for k, v in names.items() if not any(x in k.split(":")[0] for x in exclude)}
    missing, have = [], 0
    cache = {}
    for key, kind in sorted(names.items()):
        mname, attr = key.split(":")
        if mname not in cache:
            try:
                cache[mname] = importlib.import_module(mname)
            except Exception:
                cache[mname] = None
        obj = cache[mname]
        ok = obj is not None
        for part in attr.split("."):
            if not ok:
                break
            try:
                obj = getattr(obj, part)
            except Exception:
                ok = False
        if ok:
            have += 1
        else:
            missing.append(key)
    by_mod = {}
    for k in missing:
        by_mod.setdefault(k.split(":")[0], []).append(k.split(":")[1])
    for m, ks in sorted(by_mod.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(ks):5d} {m}: {', '.join(ks[:12])}{' ...' if len(ks) > 12 else ''}")
    print(f"surface: {have}/{len(names)} = {100 * have / len(names):.1f}% of MXNet 1.9.1's public names")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help") or sys.argv[1] not in ("dump", "check"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    if sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
    else:
        args = sys.argv[2:]
        exclude = ()
        if "--exclude" in args:
            i = args.index("--exclude")
            exclude = tuple(x for x in args[i + 1].split(",") if x)
            del args[i:i + 2]
        check(args[0], args[1] if len(args) > 1 else None, exclude)
